import { Elysia } from "elysia";
import { httpBasics } from "@cellar/shared/http";
import { analysisRoutes } from "./analysis/routes.ts";
import type { PlatformDeps } from "./deps.ts";
import { databaseTrouble } from "./http/database-errors.ts";
import { PLATFORM_REQUEST_DEADLINE_MS, withDeadline } from "./http/deadline.ts";
import { createPlatformLimiter } from "./http/limits.ts";
import { metricsRoutes } from "./metrics/routes.ts";
import { API_PREFIX, buildOpenApi } from "./openapi/document.ts";
import { sessionDeleteRoutes, sessionRoutes } from "./sessions/routes.ts";
import { traceRoutes } from "./traces/routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";
import { orgRoutes } from "./org/routes.ts";
import { overviewRoutes } from "./overview/routes.ts";
import { scoreRoutes } from "./scores/routes.ts";
import { monitorRoutes } from "./monitors/routes.ts";
import { evaluatorRoutes } from "./evaluations/routes.ts";
import { reviewRoutes } from "./reviews/routes.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { deadLetterRoutes } from "./dead-letters/routes.ts";
import { ledgerRoutes } from "./ledger/routes.ts";
import { SignInService } from "./signin/service.ts";
import { signInRoutes } from "./signin/routes.ts";
import { setupRoutes } from "./setup/routes.ts";

export type { PlatformDeps } from "./deps.ts";

/** The platform read API under /api/v1. Add a resource module with one `.use(...)` line below. */
export function createPlatformApp(given: PlatformDeps) {
  const deps: PlatformDeps & { signIns: SignInService } = {
    ...given,
    limiter: given.limiter ?? createPlatformLimiter(),
    signIns: given.signIns ?? new SignInService(given.db, given.sql),
  };
  const api = new Elysia({ prefix: API_PREFIX })
    .use(sessionRoutes(deps))
    .use(sessionDeleteRoutes(deps))
    .use(traceRoutes(deps))
    .use(metricsRoutes(deps))
    .use(analysisRoutes(deps))
    .use(webhookRoutes(deps))
    .use(deadLetterRoutes(deps))
    .use(orgRoutes(deps))
    .use(overviewRoutes(deps))
    .use(scoreRoutes(deps))
    .use(monitorRoutes(deps))
    .use(evaluatorRoutes(deps))
    .use(reviewRoutes(deps))
    .use(ledgerRoutes(deps));
  let openapi: ReturnType<typeof buildOpenApi> | undefined;
  let root: { routes: Parameters<typeof buildOpenApi>[0] } | undefined;
  const app = new Elysia({ name: "platform" })
    // Postgres down or too slow is 503 with Retry-After, not the catch-all 500.
    .use(httpBasics(deps.logger, { mapError: databaseTrouble }))
    .get("/health", () => ({ status: "ok" }))
    .use(api)
    // The dashboard (issue 15): its sign-in endpoints under /auth, its pages at /.
    .use(signInRoutes(deps.signIns))
    .use(setupRoutes(deps))
    .use(dashboardRoutes({ logger: deps.logger }))
    // Public like the docs it describes; built on first request so every mounted route is in it.
    .get(`${API_PREFIX}/openapi.json`, () => (openapi ??= buildOpenApi(root!.routes)));
  root = app;
  // Elysia compiles its handler on first read of `fetch` and keeps it as an own property; the
  // deadline wraps that, so `handle` (tests) and the server (ops.serve reads `fetch`) both get it.
  const compiled = app.fetch;
  Object.defineProperty(app, "fetch", {
    value: withDeadline(compiled, deps.requestDeadlineMs ?? PLATFORM_REQUEST_DEADLINE_MS),
    configurable: true,
    writable: true,
  });
  return app;
}
