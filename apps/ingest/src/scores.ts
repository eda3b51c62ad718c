import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { scoreProblem } from "@cellar/shared/ingest-rules";
import { badRequest, forbidden } from "@cellar/shared/errors";
import { type IngestScoreMessage, ScorePayload } from "@cellar/shared/payloads";
import { parseJsonStrict, readBodyText, requireJsonContentType } from "./body.ts";
import { answerErrors, type IngestPipeline, serviceNameFor } from "./pipeline.ts";
import { messageIdFor, type StoreInput } from "./publish.ts";

const SUCCESS = JSON.stringify({ status: "success" });

/** The schema, the storability rules and "exactly one of session_id, trace_id"; 400 naming the field. */
export function validateScore(body: unknown): ScorePayload {
  const problem = scoreProblem(body);
  if (problem) throw badRequest(problem);
  return body as ScorePayload;
}

/**
 * Who may say a score came from whom (docs/scores.md): a client DSN speaks for end users only;
 * a server credential for the application (`api`, default) or for end users it relays. Reviewer
 * scores are a signed-in member's, written through the platform API.
 */
export function scoreSourceFor(
  key: ResolvedKey,
  given: ScorePayload["source"],
): IngestScoreMessage["payload"]["source"] {
  if (key.kind === "dsn-client") {
    if (given !== undefined && given !== "end_user")
      throw forbidden('invalid source: a client DSN submits end_user scores only (omit source or send "end_user")');
    return "end_user";
  }
  if (given === "reviewer")
    throw forbidden("invalid source: reviewer scores are written through the platform API by a member");
  return given ?? "api";
}

/**
 * What ingest stores for a validated score: its source resolved for the credential, and its
 * idempotency key, derived from the body when the client gave none (the message id's hash, so a
 * retry whenever it comes, through this door or an item of /raw/batch, is one score).
 */
export function scoreToStore(
  key: ResolvedKey,
  given: ScorePayload,
  serviceName: string,
  idSource: string,
): StoreInput & { kind: "score" } {
  const source = scoreSourceFor(key, given.source);
  const idempotency_key =
    given.idempotency_key ??
    `body:${messageIdFor({ kind: "score", tenantId: key.tenantId, serviceName, payload: given, idSource })}`;
  return {
    kind: "score",
    tenantId: key.tenantId,
    serviceName,
    payload: { ...given, source, idempotency_key },
    idSource,
  };
}

/** The batch door's `score` item (batch.ts): the same checks and the same stored message as this door. */
export const SCORE_BATCH_ITEM = {
  kind: "score" as const,
  schema: ScorePayload,
  validate: validateScore,
  toStore: (key: ResolvedKey, payload: unknown, serviceName: string, idSource: string) =>
    scoreToStore(key, payload as ScorePayload, serviceName, idSource),
};

/**
 * POST /raw/scores (beyond the contract; docs/scores.md): same credentials, origin rules, CORS,
 * rate limit, body limit and durability as /raw/traces: 200 only after JetStream stored it.
 */
export async function postScore(
  pipeline: IngestPipeline,
  request: Request,
  requestId: string,
  client: string | undefined,
): Promise<Response> {
  return answerErrors(requestId, async (headers) => {
    const { key, cors } = await pipeline.authenticate(request, client);
    Object.assign(headers, cors, pipeline.takeRateTokens(key.id));
    requireJsonContentType(request);
    const text = await readBodyText(request, pipeline.maxBodyBytes);
    // Parsed, checked and published in this tenant's turn (pipeline.ts): behind at most one slice
    // of each other tenant's work, not behind every request that arrived with it.
    await pipeline.turn(key.tenantId);
    const body = parseJsonStrict(text);
    const idSource = JSON.stringify(body);
    const payload = validateScore(body);
    await pipeline.store(scoreToStore(key, payload, serviceNameFor(key, payload.service_name), idSource));
    return new Response(SUCCESS, { status: 200, headers: { "content-type": "application/json", ...headers } });
  });
}
