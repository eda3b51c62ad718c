import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import {
  activityStream,
  deadLetterLedgerConsumer,
  ingestStream,
  maturedRollupsStream,
} from "@cellar/shared/nats/catalogue";
import { consume, type ConsumeDeps, type ConsumeLoop } from "@cellar/shared/nats/consume";
import type { Topology } from "@cellar/shared/nats/topology";
import type { Logger } from "@cellar/shared/logger";
import { createLedgerCounter, type LedgerCounter } from "@cellar/shared/ledger/counter";
import { deadLetterLedgerHandler } from "./ledger/dead-letters.ts";
import { startReconciliation, type ReconcileOptions } from "./ledger/reconcile.ts";
import type { MaturedMessage } from "@cellar/shared/payloads";
import { activityHandler } from "./consumers/activity.ts";
import { ingestHandler } from "./consumers/ingest.ts";
import { rollupHandler } from "./rollups/rollups.ts";
import { ActivityCoalescer } from "./maturation/coalesce.ts";
import { FoldCache } from "./maturation/fold-cache.ts";
import type { MaturationDeps, Outcomes } from "./maturation/mature.ts";
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
   * INGEST batches written at once, in all (default 3) and of one tenant lane (default 2): one
   * Postgres transaction at a time left a core idle while the processor decoded the next batch.
   * Concurrent writes lock sessions and insert traces in key order, so they wait on each other
   * instead of deadlocking. A batch holds one lane's messages, so a tenant alone keeps its 2
   * batches and another lane always finds a slot (issue 41, docs/ingestion.md "Tenant lanes").
   */
  ingestConcurrency?: number;
  ingestPerLane?: number;
  /**
   * Chunks of markers of one tenant lane matured in parallel (default 4; one more slot is kept
   * for the other lanes), and entities per chunk (one transaction each).
   */
  maturationConcurrency?: number;
  maturationChunk?: number;
  /**
   * Activity batches of one tenant lane matured at once (default 2), each in up to
   * maturationConcurrency chunks; MATURATION_LANE_BATCHES in all (docs/maturation.md, "Tenant lanes").
   */
  maturationBatches?: number;
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
  /** The ledger's counts (docs/ledger.md); default: a counter of its own on `sql`. */
  ledger?: LedgerCounter;
  /** Called after each INGEST write commits, before its messages are acknowledged (fault tests: a kill there). */
  ingestAfterWrite?: () => Promise<void> | void;
  /** The ledger's reconciliation (ledger/reconcile.ts); `false` turns it off. */
  reconcile?: ReconcileOptions | false;
}

/** Activity batches in flight in all lanes together (each of one lane; markers only, the chunk slots bound the work). */
const MATURATION_LANE_BATCHES = 8;

/**
 * INGEST -> Postgres + activity keys (consumers/ingest.ts); activity markers -> maturation ->
 * MATURED (consumers/activity.ts); plus the sweep.
 */
export function createProcessor(deps: ProcessorDeps) {
  const loops: ConsumeLoop[] = [];
  const ledger = deps.ledger ?? createLedgerCounter({ sql: deps.sql, logger: deps.logger });
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
    foldCache: new FoldCache(),
    ...deps.maturation,
  };

  return {
    async start(): Promise<void> {
      coalescer.start();
      const runtime: ConsumeDeps = {
        js: deps.js,
        topology: deps.topology,
        logger: deps.logger,
        ...deps.consume,
      };
      loops.push(
        consume(ingestStream, runtime, {
          batch: {
            maxBatch: deps.ingestBatchSize ?? 500,
            maxWaitMs: deps.ingestMaxWaitMs ?? 100,
            concurrency: deps.ingestConcurrency ?? 3,
            perLane: deps.ingestPerLane ?? 2,
          },
          handle: ingestHandler(deps.sql, coalescer, ledger, {
            maxDeliver: deps.consume?.policy?.maxDeliver ?? ingestStream.consumer!.maxDeliver,
            afterWrite: deps.ingestAfterWrite,
          }),
        }),
      );
      loops.push(
        consume(activityStream, runtime, {
          // Two batches of a lane in flight: a batch's slowest chunk no longer holds the next batch
          // back (markers waited in line behind it: docs/performance.md, "Maturation throughput").
          // Each batch holds one tenant lane's markers, and one lane's backlog holds at most two
          // batches and all but one chunk slot: another lane's markers start at once (issue 41).
          batch: {
            maxBatch: 200,
            maxWaitMs: 50,
            concurrency: MATURATION_LANE_BATCHES,
            perLane: deps.maturationBatches ?? 2,
          },
          handle: activityHandler({
            maturation,
            topology: deps.topology,
            logger: deps.logger,
            coalescer,
            concurrency: (deps.maturationConcurrency ?? 4) + 1,
            perLane: deps.maturationConcurrency ?? 4,
            chunk: deps.maturationChunk ?? 50,
            observe: deps.observe,
          }),
        }),
      );
      // The overview's rollups (apps/processor/src/rollups): their own durable consumer of MATURED,
      // one batch at a time (its sessions share rollup rows: concurrent batches would queue on them).
      loops.push(
        consume(maturedRollupsStream, runtime, {
          batch: { maxBatch: 200, maxWaitMs: 100, concurrency: 1 },
          handle: rollupHandler(deps.sql),
        }),
      );
      // The ledger's dead_lettered and replayed, counted from DEAD_LETTERS once each (docs/ledger.md).
      loops.push(
        consume(deadLetterLedgerConsumer, runtime, {
          batch: { maxBatch: 100, maxWaitMs: 100, concurrency: 1 },
          handle: deadLetterLedgerHandler(deps.sql, deps.topology, ledger),
        }),
      );
      loops.push(startMonitorEvaluation({ ...deps, runtime, options: deps.monitors })); // docs/monitors.md
      if (deps.reconcile !== false) loops.push(startReconciliation({ ...deps, options: deps.reconcile })); // docs/ledger.md
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
      await ledger.stop();
      await sweeping;
      deps.logger.info("processor stopped");
    },
  };
}
export type Processor = ReturnType<typeof createProcessor>;
