import { KeyResolver } from "@cellar/shared/auth/keys";
import { createLedgerCounter } from "@cellar/shared/ledger/counter";
import { bootApp, onShutdown } from "@cellar/shared/lifecycle";
import { parseCidrList } from "@cellar/shared/webhooks/address";
import { createIngestApp } from "./app.ts";
import { openBulkLane } from "./bulk-lane.ts";
import { createOffload } from "./offload/pool.ts";
import { createOtlpGrpcServer, grpcTlsFrom } from "./otlp/grpc/server.ts";
import { createRefusalPacing } from "./pacing.ts";
import { createIngestPipeline } from "./pipeline.ts";
import { assertPayloadFits, watchConnection } from "./publish.ts";

// No async stack capture per request: ~20 us of CPU per publish on the hot path.
const { config, logger, database, nats, ops } = await bootApp("ingest", { nats: true, noAsyncTraces: true });
assertPayloadFits(nats.nc, config.INGEST_MAX_BODY_BYTES);
// Large INGEST messages on a connection of their own; ingest is not ready without it (bulk-lane.ts).
const bulk = await openBulkLane(config, logger).catch((err: Error) => {
  logger.error("cannot start", { reason: `bulk lane: ${err.message}` });
  console.error(`cellar ingest: bulk lane: ${err.message}`);
  return process.exit(1);
});
ops.addCheck("nats-bulk", bulk.check);
// Large admitted requests worked on threads of their own (offload/pool.ts); ingest does not start
// without them answering, rather than hold a request on a thread that never loaded.
const offload =
  config.INGEST_OFFLOAD_WORKERS > 0
    ? createOffload({
        workers: config.INGEST_OFFLOAD_WORKERS,
        // Beside this file: the module, or the bundle scripts/bundle.ts writes next to main.js.
        workerUrl: new URL(
          import.meta.url.endsWith(".ts") ? "./offload/worker.ts" : "./offload-worker.js",
          import.meta.url,
        ),
        minBytes: config.INGEST_OFFLOAD_MIN_BYTES,
        logger,
        observe: ops.metrics.ingestOffload,
      })
    : undefined;
await offload?.ready().catch((err: Error) => {
  logger.error("cannot start", { reason: `offload worker: ${err.message}` });
  console.error(
    `cellar ingest: offload worker: ${err.message} (INGEST_OFFLOAD_WORKERS=0 works every request on the event loop)`,
  );
  return process.exit(1);
});
// Accepted per door, refusals, SDK reports: counted in memory, one upsert per flush (docs/ledger.md).
const ledger = createLedgerCounter({ sql: database.sql, logger, observe: ops.metrics.ledgerCount });
const deps = {
  js: nats.js,
  topology: nats.topology,
  keys: new KeyResolver(database.db),
  logger,
  maxBodyBytes: config.INGEST_MAX_BODY_BYTES,
  rateLimit: { perSecond: config.INGEST_RATE_LIMIT_PER_SECOND, burst: config.INGEST_RATE_LIMIT_BURST },
  connected: watchConnection(nats.nc).connected,
  bulk: bulk.route,
  offload,
  ledger,
  // A client that ignores Retry-After gets its next 429 when the Retry-After ends (pacing.ts).
  pacing:
    config.INGEST_RATE_LIMIT_PACING_MS > 0
      ? createRefusalPacing({ maxHoldMs: config.INGEST_RATE_LIMIT_PACING_MS })
      : undefined,
};
// One pipeline for both listeners: a credential's rate limit counts HTTP and gRPC together.
const pipeline = createIngestPipeline(deps);
const app = createIngestApp(deps, pipeline);
// The app enforces INGEST_MAX_BODY_BYTES itself with a JSON 413 (before reading a declared
// length, while reading a chunked one); Bun's own cap would answer a bare 413 instead.
const server = ops.serve(app, { maxRequestBodySize: 1024 ** 3 });
logger.info("listening", { url: `http://127.0.0.1:${server.port}` });
// OTLP/gRPC (docs/otlp.md): the same OTLP handling on its own port, unless INGEST_GRPC_PORT=off.
const grpc =
  config.INGEST_GRPC_PORT === "off"
    ? null
    : createOtlpGrpcServer({
        pipeline,
        maxMessageBytes: config.INGEST_MAX_BODY_BYTES,
        logger,
        trustedProxies: parseCidrList(config.TRUSTED_PROXIES),
        tls: grpcTlsFrom(config),
        pacing: deps.pacing,
        // gRPC calls in the HTTP request metrics, by method path and the status /v1/* would answer.
        observe: (path, status, seconds) => ops.metrics.observeHttp(path, "POST", status, seconds),
      });
if (grpc) {
  const port = await grpc.listen(config.INGEST_GRPC_PORT as number).catch((err: Error) => {
    // A port already taken (a local collector on 4317) stops the app with one clear line.
    const reason = `OTLP/gRPC listener on port ${config.INGEST_GRPC_PORT}: ${err.message} (INGEST_GRPC_PORT=off turns it off)`;
    logger.error("cannot start", { reason });
    console.error(`cellar ingest: ${reason}`);
    process.exit(1);
  });
  logger.info("listening", { grpc: `${config.INGEST_GRPC_TLS_CERT_FILE ? "https" : "http"}://127.0.0.1:${port}` });
}

onShutdown(logger, [
  ["http", () => server.stop()],
  ["grpc", () => grpc?.stop()],
  ["ledger", () => ledger.stop()],
  ["offload", () => offload?.close()],
  ["nats", () => nats.nc.drain()],
  ["nats-bulk", () => bulk.drain()],
  ["postgres", () => database.close()],
]);
