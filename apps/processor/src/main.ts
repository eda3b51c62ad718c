import { createDatabase, runMigrations } from "../../../shared/db/client";
import { loadConfigOrExit, onShutdown } from "../../../shared/lifecycle";
import { createLogger } from "../../../shared/logger";
import { connectNats, createTopology, ensureTopology } from "../../../shared/nats/topology";
import { redactConfig } from "../../../shared/config";
import { createProcessor } from "./processor";

const config = await loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, { app: "processor" });
logger.info("starting", { config: redactConfig(config) });
await runMigrations(config.DATABASE_URL);
const database = createDatabase(config.DATABASE_URL, { max: 20 });
// No stack capture per publish/ack: the processor publishes on every batch.
const nc = await connectNats(config.NATS_URL, "cellar-processor", { noAsyncTraces: true });
const nats = await ensureTopology(nc, createTopology());
const processor = createProcessor({
  sql: database.sql,
  js: nats.js,
  topology: nats.topology,
  logger,
  windowSeconds: config.MATURATION_WINDOW_SECONDS,
  summaryLlm: config.SUMMARY_LLM_URL && config.SUMMARY_LLM_API_KEY
    ? { url: config.SUMMARY_LLM_URL, apiKey: config.SUMMARY_LLM_API_KEY, model: config.SUMMARY_LLM_MODEL }
    : undefined,
});
await processor.start();

onShutdown(logger, [
  ["consumers", () => processor.stop()],
  ["nats", () => nc.drain()],
  ["postgres", () => database.close()],
]);
