import { Elysia } from "elysia";
import { httpBasics } from "@cellar/shared/http";
import { postBatch } from "./batch.ts";
import { methodNotAllowed, preflightResponse } from "./credentials.ts";
import { createOtlpIngest } from "./otlp/routes.ts";
import { createIngestPipeline, type IngestDeps, type IngestPipeline } from "./pipeline.ts";
import { postRaw } from "./raw.ts";
import { postScore } from "./scores.ts";

export type { IngestDeps } from "./pipeline.ts";

/** GET /health: container health checks (docker-compose.yml). */
export function getHealth(): { status: "ok" } {
  return { status: "ok" };
}

/** GET /openapi.json: OpenAPI 3.1 of this host, built on first request. */
export async function getOpenApi(): Promise<unknown> {
  return (await import("./openapi.ts")).ingestOpenApi();
}

/**
 * The write-only ingestion host: POST /raw/traces and /raw/events (contract: Ingestion), the
 * batch door /raw/batch (docs/sdks.md) and OTLP/HTTP (docs/otlp.md). Each route's handler is a
 * named function taking the shared pipeline (pipeline.ts), tested on its own. `pipeline`: main.ts
 * passes the one the OTLP/gRPC door uses too, so a credential has one rate limit across doors.
 */
export function createIngestApp(deps: IngestDeps, pipeline: IngestPipeline = createIngestPipeline(deps)) {
  const otlp = createOtlpIngest({
    authenticate: pipeline.authenticate,
    reserveRateTokens: pipeline.reserveRateTokens,
    store: pipeline.store,
    maxBodyBytes: deps.maxBodyBytes,
    logger: deps.logger,
  });
  type Handler = (request: Request, requestId: string, client: string | undefined) => Promise<Response>;
  const posts: Array<[string, Handler]> = [
    ["/raw/traces", (...a) => postRaw(pipeline, "trace", ...a)],
    ["/raw/events", (...a) => postRaw(pipeline, "event", ...a)],
    ["/raw/batch", (...a) => postBatch(pipeline, ...a)],
    ["/raw/scores", (...a) => postScore(pipeline, ...a)], // docs/scores.md
    // OTLP/HTTP beside /raw/*: same credentials, limits and durability.
    ["/v1/traces", (...a) => otlp("traces", ...a)],
    ["/v1/logs", (...a) => otlp("logs", ...a)],
  ];
  const app = new Elysia({ name: "ingest" }).use(httpBasics(deps.logger));
  for (const [path, handle] of posts) {
    app
      .post(path, ({ request, requestId, server }) => handle(request, requestId, server?.requestIP(request)?.address), {
        parse: "none",
      })
      .options(path, ({ request }) => preflightResponse(request))
      .all(path, ({ request }) => {
        throw methodNotAllowed(request.method, path);
      });
  }
  app.get("/health", getHealth);
  app.get("/openapi.json", getOpenApi);
  return app;
}
