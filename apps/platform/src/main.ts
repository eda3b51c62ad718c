import { KeyResolver } from "../../../shared/auth/keys";
import { createDatabase, runMigrations } from "../../../shared/db/client";
import { loadConfigOrExit, onShutdown } from "../../../shared/lifecycle";
import { createLogger } from "../../../shared/logger";
import { redactConfig } from "../../../shared/config";
import { createPlatformApp } from "./app";

const config = await loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, { app: "platform" });
logger.info("starting", { config: redactConfig(config) });
await runMigrations(config.DATABASE_URL);
const database = createDatabase(config.DATABASE_URL);
const app = createPlatformApp({
  db: database.db,
  sql: database.sql,
  keys: new KeyResolver(database.db),
  logger,
  windowSeconds: config.MATURATION_WINDOW_SECONDS,
}).listen({ port: config.PLATFORM_PORT, hostname: "0.0.0.0" });
logger.info("listening", { url: `http://127.0.0.1:${app.server?.port}/api/v1` });

onShutdown(logger, [
  ["http", () => app.stop()],
  ["postgres", () => database.close()],
]);
