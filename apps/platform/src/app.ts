import { Elysia } from "elysia";
import type postgres from "postgres";
import type { Db } from "../../../shared/db/client";
import type { KeyResolver } from "../../../shared/auth/keys";
import { httpBasics } from "../../../shared/http";
import type { Logger } from "../../../shared/logger";
import { sessionRoutes } from "./sessions/routes";

export interface PlatformDeps {
  db: Db;
  sql: postgres.Sql;
  keys: KeyResolver;
  logger: Logger;
  windowSeconds: number;
}

/** The platform read API under /api/v1. */
export function createPlatformApp(deps: PlatformDeps) {
  const api = new Elysia({ prefix: "/api/v1" }).use(sessionRoutes(deps));
  return new Elysia({ name: "platform" }).use(httpBasics(deps.logger)).get("/health", () => ({ status: "ok" })).use(api);
}
