import { KeyResolver } from "../../../shared/auth/keys";
import { createDatabase, runMigrations } from "../../../shared/db/client";
import { loadConfigOrExit, onShutdown } from "../../../shared/lifecycle";
import { createLogger } from "../../../shared/logger";
import { connectNats, createTopology, ensureTopology } from "../../../shared/nats/topology";
import { redactConfig } from "../../../shared/config";
import { createIngestApp } from "./app";
import { assertPayloadFits, watchConnection } from "./publish";

const config = await loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, { app: "ingest" });
logger.info("starting", { config: redactConfig(config) });
await runMigrations(config.DATABASE_URL);
const database = createDatabase(config.DATABASE_URL);
// No async stack capture per request: ~20 us of CPU per publish on the hot path.
const nc = await connectNats(config.NATS_URL, "cellar-ingest", { noAsyncTraces: true });
const nats = await ensureTopology(nc, createTopology());
assertPayloadFits(nc, config.INGEST_MAX_BODY_BYTES);
const app = createIngestApp({
  js: nats.js,
  topology: nats.topology,
  keys: new KeyResolver(database.db),
  logger,
  maxBodyBytes: config.INGEST_MAX_BODY_BYTES,
  rateLimit: { perSecond: config.INGEST_RATE_LIMIT_PER_SECOND, burst: config.INGEST_RATE_LIMIT_BURST },
  connected: watchConnection(nc).connected,
  // The app enforces INGEST_MAX_BODY_BYTES itself with a JSON 413 (before reading a declared
  // length, while reading a chunked one); Bun's own cap would answer a bare 413 instead.
}).listen({ port: config.INGEST_PORT, hostname: "0.0.0.0", maxRequestBodySize: 1024 ** 3 });
logger.info("listening", { url: `http://127.0.0.1:${app.server?.port}` });

onShutdown(logger, [
  ["http", () => app.stop()],
  ["nats", () => nc.drain()],
  ["postgres", () => database.close()],
]);
