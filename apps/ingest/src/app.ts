import { Elysia } from "elysia";
import type { JetStreamClient } from "@nats-io/jetstream";
import { badRequest, forbidden, HttpError } from "@cellar/shared/errors";
import { httpBasics, jsonResponse } from "@cellar/shared/http";
import type { KeyResolver, ResolvedKey } from "@cellar/shared/auth/keys";
import type { Logger } from "@cellar/shared/logger";
import type { Topology } from "@cellar/shared/nats/topology";
import { parseJsonStrict, readBodyText, requireJsonContentType } from "./body.ts";
import { createAuthenticator, methodNotAllowed, preflightResponse } from "./credentials.ts";
import { createPublisher } from "./publish.ts";
import { createRateLimiter } from "@cellar/shared/rate-limit";
import { validateEvent, validateTrace } from "./validate.ts";
import { createOtlpIngest } from "./otlp/routes.ts";
import { scoreIngestRoutes } from "./scores.ts";

export interface IngestDeps {
  js: JetStreamClient;
  topology: Topology;
  keys: KeyResolver;
  logger: Logger;
  maxBodyBytes: number;
  /** How long to wait for JetStream's PubAck before answering 503 (default 5 s). */
  publishTimeoutMs?: number;
  /** Per-credential token bucket; omitted or perSecond 0 = no limit. */
  rateLimit?: { perSecond: number; burst: number };
  /** From watchConnection(nc): lets the app answer 503 at once while NATS is down. */
  connected?: () => boolean;
  /** Publishes awaiting a PubAck beyond this get 503 (default 10,000). */
  maxInFlightPublishes?: number;
  now?: () => Date;
}

const SUCCESS = JSON.stringify({ status: "success" });
const ROUTES = { "/raw/traces": "trace", "/raw/events": "event" } as const;

/** The write-only ingestion host: POST /raw/traces and /raw/events (contract: Ingestion). */
export function createIngestApp(deps: IngestDeps) {
  const now = deps.now ?? (() => new Date());
  const authenticate = createAuthenticator(deps.keys, deps.logger);
  const limiter = createRateLimiter({
    perSecond: deps.rateLimit?.perSecond ?? 0,
    burst: deps.rateLimit?.burst ?? 1,
    now: () => now().getTime(),
  });
  const store = createPublisher({
    js: deps.js,
    topology: deps.topology,
    logger: deps.logger,
    now,
    maxBodyBytes: deps.maxBodyBytes,
    publishTimeoutMs: deps.publishTimeoutMs ?? 5_000,
    connected: deps.connected,
    maxInFlight: deps.maxInFlightPublishes ?? 10_000,
  });

  function serviceNameFor(key: ResolvedKey, given: string | undefined): string {
    if (key.kind === "dsn-server" || key.kind === "dsn-client") {
      if (given !== undefined && given !== key.serviceName) {
        throw forbidden(`invalid service_name: ${JSON.stringify(given)} does not match this DSN's service`);
      }
      return key.serviceName!;
    }
    if (given === undefined) throw badRequest("invalid service_name: required (only a DSN carries its own service)");
    return given;
  }

  /** The whole pipeline; errors become responses here so CORS and rate-limit headers survive. */
  async function ingest(
    kind: "trace" | "event",
    request: Request,
    requestId: string,
    client: string | undefined,
  ): Promise<Response> {
    let headers: Record<string, string> = { "x-request-id": requestId };
    try {
      const { key, cors } = await authenticate(request, client);
      headers = { ...headers, ...cors };
      headers = { ...headers, ...limiter.take(key.id) };
      requireJsonContentType(request);
      const raw = await readBodyText(request, deps.maxBodyBytes);
      const body = parseJsonStrict(raw);
      const payload = kind === "trace" ? validateTrace(body) : validateEvent(body);
      const serviceName = serviceNameFor(key, payload.service_name);
      await store({ kind, tenantId: key.tenantId, serviceName, payload, raw });
      return new Response(SUCCESS, { status: 200, headers: { "content-type": "application/json", ...headers } });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return jsonResponse(err.status, { error: err.message }, { ...headers, ...err.headers });
    }
  }

  let app = new Elysia({ name: "ingest" }).use(httpBasics(deps.logger));
  for (const [path, kind] of Object.entries(ROUTES)) {
    app = app
      .post(
        path,
        ({ request, requestId, server }) => ingest(kind, request, requestId, server?.requestIP(request)?.address),
        { parse: "none" },
      )
      .options(path, ({ request }) => preflightResponse(request))
      .all(path, ({ request }) => {
        throw methodNotAllowed(request.method, path);
      });
  }
  app.use(
    scoreIngestRoutes({
      authenticate,
      takeRateToken: (id) => limiter.take(id),
      store,
      serviceNameFor,
      maxBodyBytes: deps.maxBodyBytes,
    }),
  ); // docs/scores.md
  // OTLP/HTTP beside /raw/* (docs/otlp.md): same credentials, limits and durability.
  const otlp = createOtlpIngest({
    authenticate,
    takeRateToken: (id) => limiter.take(id),
    store,
    maxBodyBytes: deps.maxBodyBytes,
    logger: deps.logger,
  });
  for (const [path, signal] of [
    ["/v1/traces", "traces"],
    ["/v1/logs", "logs"],
  ] as const) {
    app
      .post(
        path,
        ({ request, requestId, server }) => otlp(signal, request, requestId, server?.requestIP(request)?.address),
        { parse: "none" },
      )
      .options(path, ({ request }) => preflightResponse(request))
      .all(path, ({ request }) => {
        throw methodNotAllowed(request.method, path);
      });
  }
  app.get("/health", () => ({ status: "ok" })); // container health checks (docker-compose.yml)
  app.get("/openapi.json", async () => (await import("./openapi.ts")).ingestOpenApi()); // OpenAPI 3.1 of this host (owned by the platform API work)
  return app;
}
