import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import type { AppMetrics } from "./metrics.ts";
import type { Readiness } from "./probes.ts";

type FetchHandler = (request: Request) => Response | Promise<Response>;

/** The routes an Elysia app declares, as `app.routes` lists them. */
type RouteList = ReadonlyArray<{ method: string; path: string }>;

/**
 * The app's handler with `/health`, `/ready` and `/metrics` in front of it and every request
 * counted by route pattern. Wrapping the fetch handler (instead of Elysia hooks) sees the status
 * of every response, thrown errors and 404s included, and works the same under Bun and Deno.
 * These three paths are outside the contract's routes, so no contract answer changes.
 */
export function withOps(
  handler: FetchHandler,
  opts: { routes?: () => RouteList; metrics: AppMetrics; ready: Readiness; metricsToken?: string },
): FetchHandler {
  let matcher: ((path: string) => string) | undefined;
  const routeOf = (path: string) => (matcher ??= routeMatcher(opts.routes?.() ?? []))(path);
  const token = opts.metricsToken ? Buffer.from(`Bearer ${opts.metricsToken}`) : undefined;

  const ops: Record<string, (request: Request) => Promise<Response> | Response> = {
    "/health": () => json(200, { status: "ok" }),
    "/ready": async () => {
      // Which check failed, never why: the reason (host names, user names) goes to the log only,
      // since the ingest and platform ports are public.
      const result = await opts.ready();
      const checks = Object.fromEntries(
        Object.entries(result.checks).map(([name, state]) => [name, state === "ok" ? "ok" : "failing"]),
      );
      const failing = Object.keys(checks).filter((name) => checks[name] !== "ok");
      return result.ok
        ? json(200, { status: "ready", checks })
        : json(503, { error: `not ready: ${failing.join(", ")}`, checks }, { "retry-after": "2" });
    },
    "/metrics": async (request) => {
      if (token) {
        const given = Buffer.from(request.headers.get("authorization") ?? "");
        if (given.length !== token.length || !timingSafeEqual(given, token))
          return json(401, { error: "invalid authorization: /metrics needs the METRICS_TOKEN bearer token" });
      }
      return new Response(await opts.metrics.registry.metrics(), {
        headers: { "content-type": opts.metrics.registry.contentType },
      });
    },
  };

  return async (request) => {
    const started = performance.now();
    const path = new URL(request.url).pathname;
    const op = request.method === "GET" ? ops[path] : undefined;
    let status = 500;
    try {
      const response = await (op ? op(request) : handler(request));
      status = response.status;
      return response;
    } finally {
      opts.metrics.observeHttp(
        op ? path : routeOf(path),
        METHODS.has(request.method) ? request.method : "OTHER",
        status,
        (performance.now() - started) / 1000,
      );
    }
  };
}

/** Label values for `method`; anything else a client sends is `OTHER` (bounded cardinality). */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/**
 * Path -> the declared route it matches (`/api/v1/telemetry/sessions/:serviceName`), so label
 * values stay bounded whatever paths clients send; anything else is `unmatched`.
 */
export function routeMatcher(routes: RouteList): (path: string) => string {
  const patterns = [...new Set(routes.map((r) => r.path))]
    .map((p) => ({
      path: p,
      params: (p.match(/[:*]/g) ?? []).length,
      re: new RegExp(
        `^${p
          .split("/")
          .map((seg) =>
            seg === "*" ? ".*" : seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
          )
          .join("/")}/?$`,
      ),
    }))
    // A static route wins over a parameterised one that also matches (Elysia's own precedence).
    .sort((a, b) => a.params - b.params);
  return (path) => patterns.find((p) => p.re.test(path))?.path ?? "unmatched";
}
