import type postgres from "postgres";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { NatsHandles } from "../nats/topology.ts";
import { withOps } from "./http.ts";
import { createMetrics } from "./metrics.ts";
import { createReadiness, natsCheck, natsNeeds, postgresCheck, watchNatsStatus, type AppName } from "./probes.ts";
import { serveFetch, type Served } from "./serve.ts";
import { parseCidrList } from "../webhooks/address.ts";

/** An Elysia app as far as serving needs it: a fetch handler and its declared routes. */
interface FetchApp {
  fetch: (request: Request) => Response | Promise<Response>;
  routes?: ReadonlyArray<{ method: string; path: string }>;
  /** Elysia hands this to handlers as `server` (`.listen()` sets it); the client IP comes from it. */
  server?: unknown;
}

/**
 * One app's metrics registry, readiness checks and HTTP serving. The ingest and platform serve
 * their API with /health, /ready and /metrics in front; the processor and dispatcher serve only
 * those three on PROCESSOR_PORT / DISPATCHER_PORT.
 */
export function createAppOps(
  app: AppName,
  deps: {
    config: Config;
    logger: Logger;
    sql: postgres.Sql;
    nats?: NatsHandles;
    applicationName: string;
    poolMax: number;
  },
) {
  const metrics = createMetrics(app);
  // createDatabase opens a raw pool of poolMax and a drizzle pool of max(2, poolMax/2).
  metrics.watchPostgresPool(deps.sql, deps.applicationName, deps.poolMax + Math.max(2, Math.ceil(deps.poolMax / 2)));
  const checks: Record<string, () => Promise<unknown>> = { postgres: postgresCheck(deps.sql) };
  if (deps.nats) {
    const { nc, jsm, topology } = deps.nats;
    checks.nats = natsCheck(app, nc, jsm, topology, deps.config.NATS_USER, watchNatsStatus(nc, deps.logger));
    const needs = natsNeeds(app, topology);
    if (needs.consumers.length) metrics.watchConsumers(jsm, needs.consumers);
    if (needs.deadLetters.length) metrics.watchDeadLetters(jsm, topology.deadLetterStream, needs.deadLetters);
  }
  const ready = createReadiness(checks, {
    onChange: (r) =>
      r.ok
        ? deps.logger.info("ready", { checks: r.checks, ms: r.ms })
        : deps.logger.warn("not ready", { failed: r.failed, ms: r.ms }),
  });
  const defaultPort = {
    ingest: deps.config.INGEST_PORT,
    platform: deps.config.PLATFORM_PORT,
    processor: deps.config.HEALTH_PORT ?? deps.config.PROCESSOR_PORT,
    dispatcher: deps.config.HEALTH_PORT ?? deps.config.DISPATCHER_PORT,
  }[app];
  return {
    metrics,
    ready,
    /** One more check in /ready (a second connection the app opened itself), under `name`. */
    addCheck(name: string, check: () => Promise<unknown>): void {
      checks[name] = check;
    },
    /** Serves `api` (or only the ops routes) on the app's port; returns the bound port and stop(). */
    serve(api?: FetchApp, opts: { maxRequestBodySize?: number } = {}): Served {
      const notFound = () =>
        new Response(JSON.stringify({ error: "not found" }), {
          status: 404,
          headers: { "content-type": "application/json" },
        });
      const handler = withOps(api ? (r) => api.fetch(r) : notFound, {
        routes: () => api?.routes ?? [],
        metrics,
        ready,
        metricsToken: deps.config.METRICS_TOKEN,
      });
      const served = serveFetch(handler, {
        port: defaultPort,
        hostname: "0.0.0.0",
        maxRequestBodySize: opts.maxRequestBodySize,
        trustedProxies: parseCidrList(deps.config.TRUSTED_PROXIES),
      });
      // What `.listen()` would have set: handlers read the client address through `server.requestIP`
      // (the pre-auth limits key on it), under Bun and Deno alike.
      if (api) api.server = served;
      return served;
    },
  };
}
