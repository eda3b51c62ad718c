import { Elysia, t } from "elysia";
import type { PlatformDeps } from "../app";
import { platformAuth } from "../auth/plugin";
import { resolveService } from "../auth/principal";
import { readTranscript } from "./transcript";

export const TranscriptQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 500, default: 100 })),
  offset: t.Optional(t.Integer({ minimum: 0, default: 0 })),
  content: t.Optional(t.Union([t.Literal("lean"), t.Literal("full")], { default: "lean" })),
});

/** Session reads under S = /telemetry/otel/sessions/{serviceName}/{sessionId}. */
export function sessionRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/telemetry/otel/sessions" })
    .use(platformAuth(deps.keys))
    .get(
      "/:serviceName/:sessionId/transcript",
      async ({ params, query, principal }) => {
        const svc = await resolveService(deps.db, principal, params.serviceName);
        return readTranscript(deps.sql, svc.id, params.sessionId, { limit: query.limit ?? 100, offset: query.offset ?? 0, content: query.content ?? "lean" }, deps.windowSeconds);
      },
      { query: TranscriptQuery },
    );
}
