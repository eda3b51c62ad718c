import { KeyResolver } from "@cellar/shared/auth/keys";
import { splitList } from "@cellar/shared/config";
import { keyringFromConfig } from "@cellar/shared/crypto";
import { createDatabase } from "@cellar/shared/db/client";
import { countBeforeDelete } from "@cellar/shared/ledger/dead-letters";
import { bootApp, onShutdown } from "@cellar/shared/lifecycle";
import { createPlatformApp } from "./app.ts";
import { issueSetupToken } from "./setup/service.ts";

// Reads need only Postgres; NATS is for the webhook test and retry sends (DELIVERIES) and the
// dashboard's dead-letter view and replay (DEAD_LETTERS, INGEST).
// Every statement is cancelled past PLATFORM_STATEMENT_TIMEOUT_MS (answered 503 + Retry-After).
const { config, logger, database, nats, ops } = await bootApp("platform", {
  nats: true,
  statementTimeoutMs: (c) => c.PLATFORM_STATEMENT_TIMEOUT_MS,
});
// Telemetry and analysis reads on a streaming replica when one is configured (docs/scaling.md).
const replica = config.DATABASE_READ_URL
  ? createDatabase(config.DATABASE_READ_URL, {
      max: config.DATABASE_POOL_MAX || 10,
      statementTimeoutMs: config.PLATFORM_STATEMENT_TIMEOUT_MS,
    })
  : undefined;
const app = createPlatformApp({
  db: database.db,
  sql: database.sql,
  readSql: replica?.sql,
  keys: new KeyResolver(database.db),
  logger,
  windowSeconds: config.MATURATION_WINDOW_SECONDS,
  ingestPublicUrl: config.INGEST_PUBLIC_URL,
  webhooks: {
    secretBox: keyringFromConfig(config),
    insecureAllowlist: splitList(config.WEBHOOK_INSECURE_ALLOWLIST),
    js: nats.js,
    topology: nats.topology,
  },
  // A replay counts the dead letter in the ledger before deleting it (docs/ledger.md).
  deadLetters: { js: nats.js, topology: nats.topology, count: countBeforeDelete(database.sql, nats.topology) },
});
const server = ops.serve(app);
logger.info("listening", { url: `http://127.0.0.1:${server.port}/api/v1` });
// First run: with no organization yet, print a one-time setup token for the dashboard's /setup.
await issueSetupToken(database.db, logger, `http://127.0.0.1:${server.port}`).catch((err) =>
  logger.error("could not issue a setup token; restart the platform to try again", { err }),
);

onShutdown(logger, [
  ["http", () => server.stop()],
  ["nats", () => nats.nc.drain()],
  ["postgres", () => database.close()],
  ["postgres replica", async () => replica?.close()],
]);
