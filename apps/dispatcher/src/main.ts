import { splitList } from "@cellar/shared/config";
import { keyringFromConfig } from "@cellar/shared/crypto";
import { bootApp, onShutdown } from "@cellar/shared/lifecycle";
import { createDispatcher } from "./dispatcher.ts";

const { config, logger, database, nats, ops } = await bootApp("dispatcher", { poolMax: 20, nats: true });
const dispatcher = createDispatcher({
  db: database.db,
  sql: database.sql,
  js: nats.js,
  topology: nats.topology,
  logger,
  secretBox: keyringFromConfig(config),
  retryTimeScale: config.WEBHOOK_RETRY_TIME_SCALE,
  timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
  insecureAllowlist: splitList(config.WEBHOOK_INSECURE_ALLOWLIST),
  evaluations: { timeoutMs: config.EVALUATION_TIMEOUT_SECONDS * 1000 },
  onAttempt: ({ verdict }) =>
    ops.metrics.webhookAttempt(verdict.action === "ack" ? "delivered" : verdict.action === "nak" ? "retry" : "failed"),
});
await dispatcher.start();
const server = ops.serve(); // /health, /ready, /metrics on DISPATCHER_PORT
logger.info("listening", { url: `http://127.0.0.1:${server.port}/metrics` });

onShutdown(logger, [
  ["http", () => server.stop()],
  ["consumers", () => dispatcher.stop()],
  ["nats", () => nats.nc.drain()],
  ["postgres", () => database.close()],
]);
