import type postgres from "postgres";
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { activityStream, ingestStream, type ActivityKey } from "@cellar/shared/nats/catalogue";
import { consume, type ConsumeDeps, type ConsumeLoop, type Delivery, type Outcome } from "@cellar/shared/nats/consume";
import type { Topology } from "@cellar/shared/nats/topology";
import type { Logger } from "@cellar/shared/logger";
import type { IngestMessage, MaturedMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "./ingest/writer.ts";
import { EARLY_SECONDS, isExpiryMarker, parseActivitySubject, type EntityKind } from "./maturation/activity.ts";
import { ActivityCoalescer } from "./maturation/coalesce.ts";
import {
  matureIsolated,
  matureTraces,
  tracesOfBatch,
  type MaturationDeps,
  type Outcomes,
} from "./maturation/mature.ts";
import { sweepIdle, type SweepResult } from "./maturation/sweep.ts";
import { createLatencyNorms } from "./maturation/norms.ts";
import type { LatencyNormsSource } from "./maturation/store.ts";
import type { SummaryLlm } from "./maturation/llm-tldr.ts";
import { startMonitorEvaluation, type MonitorOptions } from "./monitors/consumer.ts";

export interface ProcessorDeps {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  windowSeconds: number;
  /** How often the reconciling sweep runs (ms). */
  sweepIntervalMs?: number;
  /** Extra idle time beyond the window before the sweep matures something itself (s). */
  sweepGraceSeconds?: number;
  ingestBatchSize?: number;
  /** How long a partial INGEST batch waits for more (ms): bigger batches cost less per trace. */
  ingestMaxWaitMs?: number;
  /**
   * INGEST batches written at once (default 2): one Postgres transaction at a time left a core
   * idle while the processor decoded the next batch. Concurrent writes lock sessions and insert
   * traces in key order, so they wait on each other instead of deadlocking.
   */
  ingestConcurrency?: number;
  /** Chunks of markers matured in parallel, and entities per chunk (one transaction each). */
  maturationConcurrency?: number;
  maturationChunk?: number;
  afterCommit?: (message: MaturedMessage) => Promise<void> | void;
  /** Metrics hooks: each maturation outcome, and each expiry marker settled (its stream time = when it fell due). */
  observe?: { outcomes(kind: "session" | "trace", outcomes: Outcomes): void; markerDone(dueAtMs: number): void };
  /** AI TL;DRs through an OpenAI-compatible endpoint (SUMMARY_LLM_*); extractive without it. */
  summaryLlm?: SummaryLlm;
  /**
   * At most one activity put per session per this many ms (default 5000; 0 = one per write):
   * see maturation/coalesce.ts. Off by itself when the window is too short for it.
   */
  activityCoalesceMs?: number;
  /** Override the service latency baseline (tests); default: recent llm spans, cached 60 s. */
  latencyNorms?: LatencyNormsSource;
  /** Overrides of the maturation's history paging and failure policy (tests, benches). */
  maturation?: Pick<MaturationDeps, "historyPaging" | "failurePolicy">;
  /** Consume runtime overrides: failure policy (tests shorten backoffs), dead-letter hook. */
  consume?: Pick<ConsumeDeps, "policy" | "onDeadLetter">;
  /** Monitor evaluation settings (monitors/consumer.ts). */
  monitors?: MonitorOptions;
}

/** INGEST -> Postgres + activity keys; activity markers -> maturation -> MATURED; plus the sweep. */
export function createProcessor(deps: ProcessorDeps) {
  const loops: ConsumeLoop[] = [];
  let sweepTimer: ReturnType<typeof setInterval> | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  const coalescer = new ActivityCoalescer({
    js: deps.js,
    topology: deps.topology,
    windowSeconds: deps.windowSeconds,
    logger: deps.logger,
    minIntervalMs: deps.activityCoalesceMs ?? 5000,
  });
  const maturation: MaturationDeps = {
    sql: deps.sql,
    js: deps.js,
    topology: deps.topology,
    logger: deps.logger,
    windowSeconds: deps.windowSeconds,
    afterCommit: deps.afterCommit,
    latencyNorms: deps.latencyNorms ?? createLatencyNorms(deps.sql),
    summaryLlm: deps.summaryLlm,
    ...deps.maturation,
  };

  /**
   * Writes a batch of decoded INGEST messages, then refreshes their activity keys (after the
   * write: an expired key then means every span before it is in Postgres). Throws on failure;
   * the consume runtime isolates the culprit and retries or dead-letters it (shared/nats).
   */
  async function writeIngest(items: Delivery<IngestMessage>[]): Promise<void> {
    const written = await writeIngestBatch(
      deps.sql,
      items.map((d) => d.value),
    );
    await coalescer.refresh([
      ...written.activeSessionPks.map((pk) => ({ kind: "session" as EntityKind, pk })),
      ...written.activeTracePks.map((pk) => ({ kind: "trace" as EntityKind, pk })),
      ...(written.traceBatchMicros ? [{ kind: "batch" as EntityKind, pk: written.traceBatchMicros }] : []),
    ]);
  }

  /**
   * Expiry markers, matured in chunks (a transaction per chunk). A failing chunk is retried one
   * entity at a time, so one bad session cannot hold back the others; what still fails is naked
   * and comes back later.
   */
  async function handleActivityBatch(batch: Delivery<ActivityKey>[]): Promise<Outcome[]> {
    type Work = { m: JsMsg; pk: string };
    const decided = new Map<JsMsg, Outcome>();
    const byKind: Record<EntityKind, Work[]> = { session: [], trace: [], batch: [] };
    for (const { value, msg: m } of batch) {
      const target = isExpiryMarker(value.headers) ? parseActivitySubject(deps.topology, value.subject) : null;
      if (!target)
        decided.set(m, "ack"); // a refresh, not an expiry
      else byKind[target.kind].push({ m, pk: target.pk });
    }
    const chunks: Array<{ kind: EntityKind; work: Array<{ m: JsMsg; pk: string }> }> = [];
    const size = deps.maturationChunk ?? 50;
    for (const kind of ["session", "trace"] as const) {
      for (let i = 0; i < byKind[kind].length; i += size) chunks.push({ kind, work: byKind[kind].slice(i, i + size) });
    }
    // A batch key stands for the traces its write inserted: one chunk per batch.
    for (const w of byKind.batch) chunks.push({ kind: "batch", work: [w] });
    // Resolves to how long to wait before the marker is retried: 0 = done (ack), else the time
    // until the entity is due (a marker that came early, see markerTtlSeconds).
    const early = (outcomes: Outcomes, pk: string) =>
      EARLY_SECONDS > 0 &&
      outcomes.get(pk) === "still-active" &&
      (outcomes.dueInMs.get(pk) ?? Infinity) <= (EARLY_SECONDS + 1) * 1000
        ? outcomes.dueInMs.get(pk)!
        : 0;
    const mature = async (kind: EntityKind, pks: string[]): Promise<Map<string, number>> => {
      const retryIn = new Map<string, number>();
      if (kind === "batch") {
        for (const micros of pks) {
          const due = await tracesOfBatch(deps.sql, micros);
          let wait = 0;
          for (let i = 0; i < due.length; i += size) {
            const outcomes = await matureTraces(maturation, due.slice(i, i + size));
            deps.observe?.outcomes("trace", outcomes);
            for (const pk of due.slice(i, i + size)) wait = Math.max(wait, early(outcomes, pk));
          }
          retryIn.set(micros, wait);
        }
        return retryIn;
      }
      // Sessions: a failing one is recorded and its marker naked for its backoff (acked once parked).
      const outcomes =
        kind === "session" ? await matureIsolated(maturation, "session", pks) : await matureTraces(maturation, pks);
      deps.observe?.outcomes(kind, outcomes);
      for (const pk of pks)
        retryIn.set(pk, outcomes.get(pk) === "backing-off" ? outcomes.dueInMs.get(pk)! : early(outcomes, pk));
      // A session whose key expired while it is still active (its coalesced trailing put was
      // lost to a crash): put the key again for the time it still has.
      if (kind === "session") {
        await Promise.all(
          pks
            .filter((pk) => outcomes.get(pk) === "still-active" && retryIn.get(pk) === 0)
            .map((pk) => coalescer.rearm(pk, outcomes.dueInMs.get(pk) ?? 0)),
        );
      }
      return retryIn;
    };
    const settle = (w: Work, retryIn: Map<string, number>) => {
      const wait = retryIn.get(w.pk) ?? 0;
      decided.set(w.m, wait > 0 ? { retryInMs: Math.ceil(wait) + 20 } : "ack");
      if (wait <= 0) deps.observe?.markerDone(w.m.time.getTime());
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(deps.maturationConcurrency ?? 4, chunks.length) }, async () => {
        while (next < chunks.length) {
          const { kind, work } = chunks[next++];
          try {
            const retryIn = await mature(
              kind,
              work.map((w) => w.pk),
            );
            for (const w of work) settle(w, retryIn);
          } catch (err) {
            deps.logger.warn("maturation chunk failed; retrying one by one", {
              kind,
              size: work.length,
              err: err as Error,
            });
            for (const w of work) {
              try {
                settle(w, await mature(kind, [w.pk]));
              } catch (oneErr) {
                deps.logger.error("maturation failed; will retry", { kind, pk: w.pk, err: oneErr as Error });
                // The runtime retries it with backoff, or dead-letters it (a data error at once,
                // anything else after the stream's max deliveries); the sweep is the safety net.
                decided.set(w.m, { fail: oneErr });
              }
            }
          }
        }
      }),
    );
    return batch.map((d) => decided.get(d.msg) ?? { retryInMs: 2_000 });
  }

  return {
    async start(): Promise<void> {
      coalescer.start();
      const runtime: ConsumeDeps = { js: deps.js, topology: deps.topology, logger: deps.logger, ...deps.consume };
      loops.push(
        consume(ingestStream, runtime, {
          batch: {
            maxBatch: deps.ingestBatchSize ?? 500,
            maxWaitMs: deps.ingestMaxWaitMs ?? 100,
            concurrency: deps.ingestConcurrency ?? 2,
          },
          handle: writeIngest,
        }),
      );
      loops.push(
        consume(activityStream, runtime, { batch: { maxBatch: 200, maxWaitMs: 50 }, handle: handleActivityBatch }),
      );
      loops.push(startMonitorEvaluation({ ...deps, runtime, options: deps.monitors })); // docs/monitors.md
      const interval = deps.sweepIntervalMs ?? 60_000;
      sweepTimer = setInterval(() => {
        sweeping = this.sweepOnce().catch((err) => deps.logger.error("sweep failed", { err }));
      }, interval);
      deps.logger.info("processor started", { windowSeconds: deps.windowSeconds });
    },
    /** Matures what lost its marker: idle longer than window + grace and still active. */
    sweepOnce(): Promise<SweepResult> {
      return sweepIdle(maturation, deps.sweepGraceSeconds ?? Math.max(60, deps.windowSeconds));
    },
    async stop(): Promise<void> {
      if (sweepTimer) clearInterval(sweepTimer);
      await Promise.all(loops.map((l) => l.stop()));
      await coalescer.stop();
      await sweeping;
      deps.logger.info("processor stopped");
    },
  };
}
export type Processor = ReturnType<typeof createProcessor>;
