import { natsCheck, postgresCheck, serveHealth } from "@cellar/shared/health";
import { bootApp, onShutdown } from "@cellar/shared/lifecycle";
import { createProcessor } from "./processor";
import { parseRetentionDays, startRetention } from "./retention/retention";

// No stack capture per publish/ack: the processor publishes on every batch.
const { config, logger, database, nats } = await bootApp("processor", { poolMax: 20, nats: true, noAsyncTraces: true });
const processor = createProcessor({
  sql: database.sql,
  js: nats.js,
  topology: nats.topology,
  logger,
  windowSeconds: config.MATURATION_WINDOW_SECONDS,
  activityCoalesceMs: config.ACTIVITY_PUT_INTERVAL_MS,
  summaryLlm: config.SUMMARY_LLM_URL && config.SUMMARY_LLM_API_KEY
    ? { url: config.SUMMARY_LLM_URL, apiKey: config.SUMMARY_LLM_API_KEY, model: config.SUMMARY_LLM_MODEL }
    : undefined,
});
await processor.start();
const retention = startRetention(database.sql, { defaults: parseRetentionDays(config.RETENTION_DAYS), intervalSeconds: config.RETENTION_INTERVAL_SECONDS, logger });
const health = serveHealth(config.HEALTH_PORT ?? 3300, [natsCheck(nats.nc, nats.jsm), postgresCheck(database.sql)]);
logger.info("health listening", { url: `http://127.0.0.1:${health.server?.port}/ready` });

onShutdown(logger, [
  ["health", () => health.stop()],
  ["consumers", () => processor.stop()],
  ["retention", () => retention.stop()],
  ["nats", () => nats.nc.drain()],
  ["postgres", () => database.close()],
]);
