import type postgres from "postgres";
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { consumeInBatches, type BatchLoop } from "@cellar/shared/nats/batch";
import type { Topology } from "@cellar/shared/nats/topology";
import type { Logger } from "@cellar/shared/logger";
import { IngestMessage, type MaturedMessage } from "@cellar/shared/payloads";
import { compileValidator } from "@cellar/shared/validation";
import { writeIngestBatch } from "./ingest/writer";
import { EARLY_SECONDS, isExpiryMarker, parseActivitySubject, refreshActivity, type EntityKind } from "./maturation/activity";
import { matureIsolated, matureTraces, tracesOfBatch, type MaturationDeps, type Outcomes } from "./maturation/mature";
import { sweepIdle, type SweepResult } from "./maturation/sweep";
import { createLatencyNorms } from "./maturation/norms";
import type { LatencyNormsSource } from "./maturation/store";
import type { SummaryLlm } from "./maturation/llm-tldr";

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
  /** AI TL;DRs through an OpenAI-compatible endpoint (SUMMARY_LLM_*); extractive without it. */
  summaryLlm?: SummaryLlm;
  /** Override the service latency baseline (tests); default: recent llm spans, cached 60 s. */
  latencyNorms?: LatencyNormsSource;
  /** Overrides of the maturation's history paging and failure policy (tests, benches). */
  maturation?: Pick<MaturationDeps, "historyPaging" | "failurePolicy">;
}

const ingestValidator = compileValidator(IngestMessage);

/** INGEST -> Postgres + activity keys; activity markers -> maturation -> MATURED; plus the sweep. */
export function createProcessor(deps: ProcessorDeps) {
  const loops: BatchLoop[] = [];
  let sweepTimer: ReturnType<typeof setInterval> | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  const refreshing = new Set<Promise<void>>();
  const maturation: MaturationDeps = {
    sql: deps.sql, js: deps.js, topology: deps.topology, logger: deps.logger, windowSeconds: deps.windowSeconds, afterCommit: deps.afterCommit,
    latencyNorms: deps.latencyNorms ?? createLatencyNorms(deps.sql), summaryLlm: deps.summaryLlm, ...deps.maturation,
  };

  async function handleIngestBatch(batch: JsMsg[]): Promise<void> {
    const good: IngestMessage[] = [];
    const goodMsgs: JsMsg[] = [];
    for (const m of batch) {
      let decoded: unknown;
      try {
        decoded = m.json();
      } catch {
        decoded = undefined;
      }
      const problem = ingestValidator.firstError(decoded);
      if (problem) {
        deps.logger.error("poison INGEST message terminated", { seq: m.seq, problem });
        m.term(problem);
        continue;
      }
      good.push(decoded as IngestMessage);
      goodMsgs.push(m);
    }
    if (good.length === 0) return;
    const written = await writeIngestBatch(deps.sql, good);
    // Refresh after the write: an expired key then means every span before it is in Postgres.
    // The refresh and ack run while the next batch is written (bounded), so Postgres and NATS
    // work in parallel; a failed refresh naks the batch (the replay writes nothing new and
    // refreshes again).
    const refresh = refreshActivity(deps.js, deps.topology, [
      ...written.activeSessionPks.map((pk) => ({ kind: "session" as EntityKind, pk })),
      ...written.activeTracePks.map((pk) => ({ kind: "trace" as EntityKind, pk })),
      ...(written.traceBatchMicros ? [{ kind: "batch" as EntityKind, pk: written.traceBatchMicros }] : []),
    ], deps.windowSeconds)
      .then(() => {
        for (const m of goodMsgs) m.ack();
      })
      .catch((err) => {
        deps.logger.error("activity refresh failed; naking the batch", { err: err as Error, size: goodMsgs.length });
        for (const m of goodMsgs) m.nak(1_000);
      })
      .finally(() => refreshing.delete(refresh));
    refreshing.add(refresh);
    while (refreshing.size > 2) await Promise.race(refreshing);
  }

  /**
   * Expiry markers, matured in chunks (a transaction per chunk). A failing chunk is retried one
   * entity at a time, so one bad session cannot hold back the others; what still fails is naked
   * and comes back later.
   */
  async function handleActivityBatch(batch: JsMsg[]): Promise<void> {
    const byKind: Record<EntityKind, Array<{ m: JsMsg; pk: string }>> = { session: [], trace: [], batch: [] };
    for (const m of batch) {
      const target = isExpiryMarker(m.headers) ? parseActivitySubject(deps.topology, m.subject) : null;
      if (!target) m.ack(); // a refresh, not an expiry
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
      EARLY_SECONDS > 0 && outcomes.get(pk) === "still-active" && (outcomes.dueInMs.get(pk) ?? Infinity) <= (EARLY_SECONDS + 1) * 1000 ? outcomes.dueInMs.get(pk)! : 0;
    const mature = async (kind: EntityKind, pks: string[]): Promise<Map<string, number>> => {
      const retryIn = new Map<string, number>();
      if (kind === "batch") {
        for (const micros of pks) {
          const due = await tracesOfBatch(deps.sql, micros);
          let wait = 0;
          for (let i = 0; i < due.length; i += size) {
            const outcomes = await matureTraces(maturation, due.slice(i, i + size));
            for (const pk of due.slice(i, i + size)) wait = Math.max(wait, early(outcomes, pk));
          }
          retryIn.set(micros, wait);
        }
        return retryIn;
      }
      // Sessions: a failing one is recorded and its marker naked for its backoff (acked once parked).
      const outcomes = kind === "session" ? await matureIsolated(maturation, "session", pks) : await matureTraces(maturation, pks);
      for (const pk of pks) retryIn.set(pk, outcomes.get(pk) === "backing-off" ? outcomes.dueInMs.get(pk)! : early(outcomes, pk));
      return retryIn;
    };
    const settle = (w: { m: JsMsg; pk: string }, retryIn: Map<string, number>) => {
      const wait = retryIn.get(w.pk) ?? 0;
      if (wait > 0) w.m.nak(Math.ceil(wait) + 20);
      else w.m.ack();
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(deps.maturationConcurrency ?? 4, chunks.length) }, async () => {
        while (next < chunks.length) {
          const { kind, work } = chunks[next++];
          try {
            const retryIn = await mature(kind, work.map((w) => w.pk));
            for (const w of work) settle(w, retryIn);
          } catch (err) {
            deps.logger.warn("maturation chunk failed; retrying one by one", { kind, size: work.length, err: err as Error });
            for (const w of work) {
              try {
                settle(w, await mature(kind, [w.pk]));
              } catch (oneErr) {
                deps.logger.error("maturation failed; will retry", { kind, pk: w.pk, err: oneErr as Error });
                w.m.nak(2_000);
              }
            }
          }
        }
      }),
    );
  }

  return {
    async start(): Promise<void> {
      const ingestConsumer = await deps.js.consumers.get(deps.topology.ingestStream, deps.topology.consumers.processorIngest);
      const activityConsumer = await deps.js.consumers.get(`KV_${deps.topology.activityBucket}`, deps.topology.consumers.processorActivity);
      loops.push(consumeInBatches(ingestConsumer, { maxBatch: deps.ingestBatchSize ?? 500, maxWaitMs: deps.ingestMaxWaitMs ?? 100, concurrency: deps.ingestConcurrency ?? 2, logger: deps.logger, handle: handleIngestBatch }));
      loops.push(consumeInBatches(activityConsumer, { maxBatch: 200, maxWaitMs: 50, logger: deps.logger, handle: handleActivityBatch }));
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
      await Promise.all(refreshing);
      await sweeping;
      deps.logger.info("processor stopped");
    },
  };
}
export type Processor = ReturnType<typeof createProcessor>;
