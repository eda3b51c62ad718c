import { createLedgerCounter } from "@cellar/shared/ledger/counter";
import { bootApp, onShutdown } from "@cellar/shared/lifecycle";
import { createProcessor } from "./processor.ts";
import { parseRetentionDays, startRetention } from "./retention/retention.ts";
import { startPayloadBackfill } from "./upgrade/payload-backfill.ts";

// No stack capture per publish/ack: the processor publishes on every batch.
const { config, logger, database, nats, ops } = await bootApp("processor", {
  poolMax: 20,
  nats: true,
  noAsyncTraces: true,
});
const processor = createProcessor({
  sql: database.sql,
  js: nats.js,
  topology: nats.topology,
  logger,
  windowSeconds: config.MATURATION_WINDOW_SECONDS,
  activityCoalesceMs: config.ACTIVITY_PUT_INTERVAL_MS,
  observe: {
    outcomes: (kind, outcomes) => {
      for (const outcome of outcomes.values()) ops.metrics.maturation(kind, outcome);
    },
    markerDone: (dueAtMs) => ops.metrics.maturationLateness((Date.now() - dueAtMs) / 1000),
  },
  // Loss is loud: an INGEST dead letter is counted per tenant (logged at error by the runtime).
  // The ledger (docs/ledger.md): stored and dead-lettered counts, and the reconciliation.
  ledger: createLedgerCounter({ sql: database.sql, logger, observe: ops.metrics.ledgerCount }),
  reconcile: {
    everyMs: config.LEDGER_RECONCILE_SECONDS * 1000,
    onVerdicts: (unbalanced) =>
      ops.metrics.ledgerReconciled(
        unbalanced.flatMap((v) => [
          ...(v.unaccounted ? [{ tenant: v.tenantId, check: "unaccounted", items: v.unaccounted }] : []),
          ...(v.missingTraceRows ? [{ tenant: v.tenantId, check: "trace_rows", items: v.missingTraceRows }] : []),
        ]),
      ),
  },
  consume: { onDeadLetter: (d) => d.stream === nats.topology.ingestStream && ops.metrics.ingestDeadLetter(d.tenant) },
  summaryLlm:
    config.SUMMARY_LLM_URL && config.SUMMARY_LLM_API_KEY
      ? { url: config.SUMMARY_LLM_URL, apiKey: config.SUMMARY_LLM_API_KEY, model: config.SUMMARY_LLM_MODEL }
      : undefined,
});
await processor.start();
const retention = startRetention(database.sql, {
  defaults: parseRetentionDays(config.RETENTION_DAYS),
  intervalSeconds: config.RETENTION_INTERVAL_SECONDS,
  logger,
});
// Rows written before migration 0015 move to the compressed shape in the background.
const backfill = startPayloadBackfill(database.sql, logger);
const server = ops.serve(); // /health, /ready, /metrics on PROCESSOR_PORT
logger.info("listening", { url: `http://127.0.0.1:${server.port}/metrics` });

onShutdown(logger, [
  ["http", () => server.stop()],
  ["consumers", () => processor.stop()],
  ["retention", () => retention.stop()],
  ["backfill", () => backfill.stop()],
  ["nats", () => nats.nc.drain()],
  ["postgres", () => database.close()],
]);
