import { Elysia, t } from "elysia";
import { badRequest, forbidden } from "@cellar/shared/errors";
import { scoreProblem } from "@cellar/shared/ingest-rules";
import type { ScorePayload } from "@cellar/shared/payloads";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { hasRole, resolveService, type Principal } from "../auth/principal.ts";
import { doc, requiredQuery } from "../http/schemas.ts";
import { Score, ScoreConfig, ScoreConfigBody, ScoreConfigList, ScoreList } from "./model.ts";
import { createScore, deleteScoreConfig, listScoreConfigs, listScores, putScoreConfig } from "./service.ts";

const TAG = "Scores";
const NAME_PATTERN = /^[^\s\u0000-\u001f\u007f][^\u0000-\u001f\u007f]{0,127}$/;

const requireRole = (p: Principal, min: "member" | "admin", what: string) => {
  if (!hasRole(p, min)) throw forbidden(`${what} needs role ${min} or higher`);
};

/**
 * Scores (docs/scores.md): POST /scores (member and above) and the reads of one session's or one
 * trace's scores; declared names per service under /scores/configs (admin declares, anyone with
 * access to the service reads). Session rows carry rollups (sessions/filtered).
 */
export function scoreRoutes(deps: PlatformDeps) {
  const service = (p: Principal, name: string) =>
    resolveService(deps.sql, p, name).then((s) => ({ ...s, tenantId: p.tenantId }));
  return new Elysia()
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .post(
      "/scores",
      async ({ principal, body, set }) => {
        requireRole(principal, "member", "writing a score");
        const problem = scoreProblem(body);
        if (problem) throw badRequest(problem);
        const given = body as ScorePayload;
        if (given.service_name === undefined) throw badRequest("invalid service_name: required");
        const svc = await service(principal, given.service_name);
        const { created, score } = await createScore(
          deps.sql,
          svc,
          { ...given, source: given.source ?? "api" },
          principal.userId,
        );
        set.status = created ? 201 : 200;
        return score;
      },
      {
        detail: doc(TAG, "Record a score of a session or a trace (idempotent on idempotency_key)", Score, {
          status: 201,
          errors: [400, 401, 403, 404],
          description:
            "Body: service_name, session_id or trace_id, name, value (number, boolean or label), comment, source (api default, reviewer, end_user), idempotency_key. 200 with the stored score when the key was seen before.",
        }),
      },
    )
    .get(
      "/telemetry/otel/sessions/:serviceName/:sessionId/scores",
      async ({ principal, params }) => ({
        scores: await listScores(deps.sql, await service(principal, params.serviceName), {
          sessionId: params.sessionId,
        }),
      }),
      {
        params: t.Object({ serviceName: t.String(), sessionId: t.String() }),
        detail: doc(TAG, "Scores of a session (also before the session exists)", ScoreList),
      },
    )
    .get(
      "/telemetry/otel/trace/:traceId/scores",
      async ({ principal, params, query }) => ({
        scores: await listScores(deps.sql, await service(principal, query.serviceName), { traceId: params.traceId }),
      }),
      {
        params: t.Object({ traceId: t.String() }),
        query: t.Object({ serviceName: requiredQuery("serviceName") }),
        detail: doc(TAG, "Scores of a trace (also before the trace exists)", ScoreList),
      },
    )
    .get(
      "/scores/configs/:serviceName",
      async ({ principal, params }) => listScoreConfigs(deps.sql, await service(principal, params.serviceName)),
      { detail: doc(TAG, "Score names the service declares", ScoreConfigList) },
    )
    .put(
      "/scores/configs/:serviceName/:name",
      async ({ principal, params, body }) => {
        requireRole(principal, "admin", "declaring a score name");
        if (!NAME_PATTERN.test(params.name))
          throw badRequest("invalid name: 1 to 128 characters, no control characters, not starting with a space");
        return putScoreConfig(deps.sql, await service(principal, params.serviceName), params.name, body);
      },
      { body: ScoreConfigBody, detail: doc(TAG, "Declare (or redeclare) a score name of the service", ScoreConfig) },
    )
    .delete(
      "/scores/configs/:serviceName/:name",
      async ({ principal, params, set }) => {
        requireRole(principal, "admin", "removing a score name");
        await deleteScoreConfig(deps.sql, await service(principal, params.serviceName), params.name);
        set.status = 204;
        return null;
      },
      { detail: doc(TAG, "Remove a declared score name (its scores stay)", t.Null(), { status: 204 }) },
    );
}
