import { createDatabase, runMigrations } from "../../../shared/db/client";
import { loadConfigOrExit, onShutdown } from "../../../shared/lifecycle";
import { createLogger } from "../../../shared/logger";
import { connectNats, createTopology, ensureTopology } from "../../../shared/nats/topology";
import { redactConfig, splitList } from "../../../shared/config";
import { SecretBox } from "../../../shared/crypto";
import { createDispatcher } from "./dispatcher";

const config = await loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, { app: "dispatcher" });
logger.info("starting", { config: redactConfig(config) });
await runMigrations(config.DATABASE_URL);
const database = createDatabase(config.DATABASE_URL, { max: 20 });
const nc = await connectNats(config.NATS_URL, "cellar-dispatcher");
const nats = await ensureTopology(nc, createTopology());
const dispatcher = createDispatcher({
  db: database.db,
  sql: database.sql,
  js: nats.js,
  topology: nats.topology,
  logger,
  secretBox: new SecretBox(config.SECRET_ENCRYPTION_KEY),
  retryTimeScale: config.WEBHOOK_RETRY_TIME_SCALE,
  timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
  insecureAllowlist: splitList(config.WEBHOOK_INSECURE_ALLOWLIST),
});
await dispatcher.start();

onShutdown(logger, [
  ["consumers", () => dispatcher.stop()],
  ["nats", () => nc.drain()],
  ["postgres", () => database.close()],
]);
