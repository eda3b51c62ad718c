import { KeyResolver } from "../../../shared/auth/keys";
import { createDatabase, runMigrations } from "../../../shared/db/client";
import { loadConfigOrExit, onShutdown } from "../../../shared/lifecycle";
import { createLogger } from "../../../shared/logger";
import { connectNats, createTopology, ensureTopology } from "../../../shared/nats/topology";
import { redactConfig } from "../../../shared/config";
import { createIngestApp } from "./app";

const config = await loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, { app: "ingest" });
logger.info("starting", { config: redactConfig(config) });
await runMigrations(config.DATABASE_URL);
const database = createDatabase(config.DATABASE_URL);
const nc = await connectNats(config.NATS_URL, "cellar-ingest");
const nats = await ensureTopology(nc, createTopology());
const app = createIngestApp({
  js: nats.js,
  topology: nats.topology,
  keys: new KeyResolver(database.db),
  logger,
  maxBodyBytes: config.INGEST_MAX_BODY_BYTES,
}).listen({ port: config.INGEST_PORT, hostname: "0.0.0.0", maxRequestBodySize: config.INGEST_MAX_BODY_BYTES + 1024 });
logger.info("listening", { url: `http://127.0.0.1:${app.server?.port}` });

onShutdown(logger, [
  ["http", () => app.stop()],
  ["nats", () => nc.drain()],
  ["postgres", () => database.close()],
]);
