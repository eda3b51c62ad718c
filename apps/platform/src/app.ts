import { Elysia } from "elysia";
import type postgres from "postgres";
import type { Db } from "@cellar/shared/db/client";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { httpBasics } from "@cellar/shared/http";
import type { Logger } from "@cellar/shared/logger";
import { analysisRoutes } from "./analysis/routes";
import { metricsRoutes } from "./metrics/routes";
import { API_PREFIX, buildOpenApi } from "./openapi/document";
import { sessionRoutes } from "./sessions/routes";
import { sessionDeleteRoutes } from "./sessions/delete";
import { traceRoutes } from "./traces/routes";
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

/** The platform read API under /api/v1. Add a resource module with one `.use(...)` line below. */
export function createPlatformApp(deps: PlatformDeps) {
  const api = new Elysia({ prefix: API_PREFIX })
    .use(sessionRoutes(deps))
    .use(sessionDeleteRoutes(deps))
    .use(traceRoutes(deps))
    .use(metricsRoutes(deps))
    .use(analysisRoutes(deps))
    .use(webhookRoutes(deps));
  let openapi: ReturnType<typeof buildOpenApi> | undefined;
  let root: { routes: Parameters<typeof buildOpenApi>[0] } | undefined;
  const app = new Elysia({ name: "platform" })
    .use(httpBasics(deps.logger))
    .get("/health", () => ({ status: "ok" }))
    .use(api)
    // Public like the docs it describes; built on first request so every mounted route is in it.
    .get(`${API_PREFIX}/openapi.json`, () => (openapi ??= buildOpenApi(root!.routes)));
  root = app;
  return app;
}
