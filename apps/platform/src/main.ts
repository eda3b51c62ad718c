import { KeyResolver } from "../../../shared/auth/keys";
import { createDatabase, runMigrations } from "../../../shared/db/client";
import { loadConfigOrExit, onShutdown } from "../../../shared/lifecycle";
import { createLogger } from "../../../shared/logger";
import { redactConfig, splitList } from "../../../shared/config";
import { SecretBox } from "../../../shared/crypto";
import { connectNats, createTopology, ensureTopology } from "../../../shared/nats/topology";
import { createPlatformApp } from "./app";

const config = await loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, { app: "platform" });
logger.info("starting", { config: redactConfig(config) });
await runMigrations(config.DATABASE_URL);
const database = createDatabase(config.DATABASE_URL);
// Reads need only Postgres; NATS is for the webhook test and retry sends (DELIVERIES).
const nc = await connectNats(config.NATS_URL, "cellar-platform");
const nats = await ensureTopology(nc, createTopology());
const app = createPlatformApp({
  db: database.db,
  sql: database.sql,
  keys: new KeyResolver(database.db),
  logger,
  windowSeconds: config.MATURATION_WINDOW_SECONDS,
  webhooks: {
    secretBox: new SecretBox(config.SECRET_ENCRYPTION_KEY),
    insecureAllowlist: splitList(config.WEBHOOK_INSECURE_ALLOWLIST),
    js: nats.js,
    topology: nats.topology,
  },
}).listen({ port: config.PLATFORM_PORT, hostname: "0.0.0.0" });
logger.info("listening", { url: `http://127.0.0.1:${app.server?.port}/api/v1` });

onShutdown(logger, [
  ["http", () => app.stop()],
  ["nats", () => nc.drain()],
  ["postgres", () => database.close()],
]);
