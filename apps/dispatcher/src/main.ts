import { splitList } from "@cellar/shared/config";
import { keyringFromConfig } from "@cellar/shared/crypto";
import { natsCheck, postgresCheck, serveHealth } from "@cellar/shared/health";
import { bootApp, onShutdown } from "@cellar/shared/lifecycle";
import { createDispatcher } from "./dispatcher";

const { config, logger, database, nats } = await bootApp("dispatcher", { poolMax: 20, nats: true });
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
});
await dispatcher.start();
const health = serveHealth(config.HEALTH_PORT ?? 3400, [natsCheck(nats.nc, nats.jsm), postgresCheck(database.sql)]);
logger.info("health listening", { url: `http://127.0.0.1:${health.server?.port}/ready` });

onShutdown(logger, [
  ["health", () => health.stop()],
  ["consumers", () => dispatcher.stop()],
  ["nats", () => nats.nc.drain()],
  ["postgres", () => database.close()],
]);
