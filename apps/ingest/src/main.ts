import { KeyResolver } from "@cellar/shared/auth/keys";
import { bootApp, onShutdown } from "@cellar/shared/lifecycle";
import { createIngestApp } from "./app.ts";
import { assertPayloadFits, watchConnection } from "./publish.ts";

// No async stack capture per request: ~20 us of CPU per publish on the hot path.
const { config, logger, database, nats, ops } = await bootApp("ingest", { nats: true, noAsyncTraces: true });
assertPayloadFits(nats.nc, config.INGEST_MAX_BODY_BYTES);
const app = createIngestApp({
  js: nats.js,
  topology: nats.topology,
  keys: new KeyResolver(database.db),
  logger,
  maxBodyBytes: config.INGEST_MAX_BODY_BYTES,
  rateLimit: { perSecond: config.INGEST_RATE_LIMIT_PER_SECOND, burst: config.INGEST_RATE_LIMIT_BURST },
  connected: watchConnection(nats.nc).connected,
});
// The app enforces INGEST_MAX_BODY_BYTES itself with a JSON 413 (before reading a declared
// length, while reading a chunked one); Bun's own cap would answer a bare 413 instead.
const server = ops.serve(app, { maxRequestBodySize: 1024 ** 3 });
logger.info("listening", { url: `http://127.0.0.1:${server.port}` });

onShutdown(logger, [
  ["http", () => server.stop()],
  ["nats", () => nats.nc.drain()],
  ["postgres", () => database.close()],
]);
