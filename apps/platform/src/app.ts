import { Elysia } from "elysia";
import type postgres from "postgres";
import type { Db } from "../../../shared/db/client";
import type { KeyResolver } from "../../../shared/auth/keys";
import { httpBasics } from "../../../shared/http";
import type { Logger } from "../../../shared/logger";
import { sessionRoutes } from "./sessions/routes";
import { webhookRoutes, type WebhookOptions } from "./webhooks/routes";

export interface PlatformDeps {
  db: Db;
  sql: postgres.Sql;
  keys: KeyResolver;
  logger: Logger;
  windowSeconds: number;
  /** Webhook management: secret sealing, DNS, allowlist, and DELIVERIES for test sends. */
  webhooks?: WebhookOptions;
}

/** The platform read API under /api/v1. */
export function createPlatformApp(deps: PlatformDeps) {
  const api = new Elysia({ prefix: "/api/v1" }).use(sessionRoutes(deps)).use(webhookRoutes(deps));
  return new Elysia({ name: "platform" }).use(httpBasics(deps.logger)).get("/health", () => ({ status: "ok" })).use(api);
}
