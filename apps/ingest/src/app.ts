import { Elysia } from "elysia";
import { httpBasics } from "@cellar/shared/http";
import { postBatch } from "./batch.ts";
import { methodNotAllowed, preflightResponse } from "./credentials.ts";
import { createOtlpIngest } from "./otlp/routes.ts";
import type { IngestDoor } from "@cellar/shared/ledger/model";
import { countedRequest } from "./ledger.ts";
import type { RefusalPacing } from "./pacing.ts";
import { createIngestPipeline, type IngestDeps, type IngestPipeline } from "./pipeline.ts";
import { postRaw } from "./raw.ts";
import { postScore } from "./scores.ts";

export type { IngestDeps } from "./pipeline.ts";

/** A 429 answered when pacing.ts allows: later for a credential back before its Retry-After. */
function paceRefusal(pacing: RefusalPacing, request: Request, response: Response, client: string | undefined) {
  const declared = request.headers.get("content-length");
  return pacing.pace(
    request.headers.get("authorization") ?? `address ${client ?? ""}`,
    Number(response.headers.get("retry-after") ?? 1),
    declared === null ? null : Number(declared),
  );
}

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
  // Built per request from the request's counting pipeline (ledger.ts): a few closures.
  const otlp = (p: IngestPipeline) =>
    createOtlpIngest({
      authenticate: p.authenticate,
      reserveRateTokens: p.reserveRateTokens,
      storeAll: p.storeAll,
      storeBuilt: p.storeBuilt,
      offloaded: p.offloaded,
      turn: p.turn,
      refuseItems: p.refuseItems,
      maxBodyBytes: deps.maxBodyBytes,
      logger: deps.logger,
    });
  type Handler = (
    pipeline: IngestPipeline,
    request: Request,
    requestId: string,
    client: string | undefined,
  ) => Promise<Response>;
  // Each door is counted apart in the ledger (docs/ledger.md); a new door names its own.
  const posts: Array<[string, IngestDoor, Handler]> = [
    ["/raw/traces", "raw", (p, ...a) => postRaw(p, "trace", ...a)],
    ["/raw/events", "raw", (p, ...a) => postRaw(p, "event", ...a)],
    ["/raw/batch", "batch", (p, ...a) => postBatch(p, ...a)],
    ["/raw/scores", "scores", (p, ...a) => postScore(p, ...a)], // docs/scores.md
    // OTLP/HTTP beside /raw/*: same credentials, limits and durability.
    ["/v1/traces", "otlp", (p, ...a) => otlp(p)("traces", ...a)],
    ["/v1/logs", "otlp", (p, ...a) => otlp(p)("logs", ...a)],
  ];
  const app = new Elysia({ name: "ingest" }).use(httpBasics(deps.logger));
  for (const [path, door, handle] of posts) {
    app
      .post(
        path,
        async ({ request, requestId, server }) => {
          const counted = countedRequest(pipeline, door);
          const client = server?.requestIP(request)?.address;
          const response = counted.settle(await handle(counted.pipeline, request, requestId, client));
          if (response.status === 429 && deps.pacing) await paceRefusal(deps.pacing, request, response, client);
          return response;
        },
        { parse: "none" },
      )
      .options(path, ({ request }) => preflightResponse(request))
      .all(path, ({ request }) => {
        throw methodNotAllowed(request.method, path);
      });
  }
  app.get("/health", getHealth);
  app.get("/openapi.json", getOpenApi);
  return app;
}
