import { Elysia, t } from "elysia";
import { ScorePayload } from "@cellar/shared/payloads";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { doc, LOOKUP_ERRORS, requiredQuery } from "../http/schemas.ts";
import { scoreConfigsOf, scoresOfSession, scoresOfTrace } from "../query/scores.ts";
import { Score, ScoreConfig, ScoreConfigBody, ScoreConfigList, ScoreList } from "./model.ts";
import { declareScoreName, recordScore, removeScoreName } from "./service.ts";

const TAG = "Scores";

/** POST /scores's body, for the document: ingest's score payload with service_name required (checked by hand, as ingest checks it). */
const ScoreBody = t.Composite(
  [t.Omit(ScorePayload, ["service_name"]), t.Required(t.Pick(ScorePayload, ["service_name"]))],
  { additionalProperties: false },
);

/**
 * Scores (docs/scores.md): POST /scores (member and above) and the reads of one session's or one
 * trace's scores; declared names per service under /scores/configs (admin declares, anyone with
 * access to the service reads). Session rows carry rollups (sessions/filtered).
 */
export function scoreRoutes(deps: PlatformDeps) {
  return new Elysia()
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .post(
      "/scores",
      async ({ principal, body, set }) => {
        const { created, score } = await recordScore(deps.sql, principal, body);
        set.status = created ? 201 : 200;
        return score;
      },
      {
        detail: doc(TAG, "Record a score of a session or a trace (idempotent on idempotency_key)", Score, {
          status: 201,
          alsoStatus: 200,
          errors: [400, 401, 403, 404],
          request: ScoreBody,
          description:
            "Body: service_name, session_id or trace_id, name, value (number, boolean or label), comment, source (api default, reviewer, end_user), idempotency_key. 200 with the stored score when the key was seen before.",
        }),
      },
    )
    .get(
      "/telemetry/otel/sessions/:serviceName/:sessionId/scores",
      ({ principal, params }) => scoresOfSession(deps.sql, principal, params.serviceName, params.sessionId),
      {
        params: t.Object({ serviceName: t.String(), sessionId: t.String() }),
        detail: doc(TAG, "Scores of a session (also before the session exists)", ScoreList, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/telemetry/otel/trace/:traceId/scores",
      ({ principal, params, query }) => scoresOfTrace(deps.sql, principal, query.serviceName, params.traceId),
      {
        params: t.Object({ traceId: t.String() }),
        query: t.Object({ serviceName: requiredQuery("serviceName") }),
        detail: doc(TAG, "Scores of a trace (also before the trace exists)", ScoreList),
      },
    )
    .get(
      "/scores/configs/:serviceName",
      ({ principal, params }) => scoreConfigsOf(deps.sql, principal, params.serviceName),
      { detail: doc(TAG, "Score names the service declares", ScoreConfigList, { errors: LOOKUP_ERRORS }) },
    )
    .put(
      "/scores/configs/:serviceName/:name",
      ({ principal, params, body }) => declareScoreName(deps.sql, principal, params.serviceName, params.name, body),
      { body: ScoreConfigBody, detail: doc(TAG, "Declare (or redeclare) a score name of the service", ScoreConfig) },
    )
    .delete(
      "/scores/configs/:serviceName/:name",
      async ({ principal, params, set }) => {
        await removeScoreName(deps.sql, principal, params.serviceName, params.name);
        set.status = 204;
        return null;
      },
      { detail: doc(TAG, "Remove a declared score name (its scores stay)", t.Null(), { status: 204 }) },
    );
}
