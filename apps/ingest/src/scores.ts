import { Elysia } from "elysia";
import { badRequest, forbidden, HttpError } from "@cellar/shared/errors";
import { jsonResponse } from "@cellar/shared/http";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { scoreProblem } from "@cellar/shared/ingest-rules";
import type { IngestScoreMessage, ScorePayload } from "@cellar/shared/payloads";
import { parseJsonStrict, readBodyText, requireJsonContentType } from "./body.ts";
import { methodNotAllowed, preflightResponse, type Authenticated } from "./credentials.ts";
import { messageIdFor, type StoreInput } from "./publish.ts";

export interface ScoreIngestDeps {
  authenticate: (request: Request, client?: string) => Promise<Authenticated>;
  takeRateToken: (keyId: string) => Record<string, string>;
  store: (input: StoreInput) => Promise<unknown>;
  /** The service a payload names, checked against a DSN's own (403 on a mismatch). */
  serviceNameFor: (key: ResolvedKey, given: string | undefined) => string;
  maxBodyBytes: number;
}

const PATH = "/raw/scores";
const SUCCESS = JSON.stringify({ status: "success" });

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
 * POST /raw/scores (beyond the contract; docs/scores.md): same credentials, origin rules, CORS,
 * rate limit, body limit and durability as /raw/traces: 200 only after JetStream stored the
 * score. Without an `idempotency_key` the key is derived from the body, so a retried request is
 * one score however late it comes.
 */
export function scoreIngestRoutes(deps: ScoreIngestDeps) {
  async function ingestScore(request: Request, requestId: string, client: string | undefined): Promise<Response> {
    let headers: Record<string, string> = { "x-request-id": requestId };
    try {
      const { key, cors } = await deps.authenticate(request, client);
      headers = { ...headers, ...cors, ...deps.takeRateToken(key.id) };
      requireJsonContentType(request);
      const raw = await readBodyText(request, deps.maxBodyBytes);
      const body = parseJsonStrict(raw);
      const problem = scoreProblem(body);
      if (problem) throw badRequest(problem);
      const given = body as ScorePayload;
      const serviceName = deps.serviceNameFor(key, given.service_name);
      const source = scoreSourceFor(key, given.source);
      const idempotency_key =
        given.idempotency_key ??
        `body:${messageIdFor({ kind: "score", tenantId: key.tenantId, serviceName, payload: given, raw })}`;
      await deps.store({
        kind: "score",
        tenantId: key.tenantId,
        serviceName,
        payload: { ...given, source, idempotency_key },
        raw,
      });
      return new Response(SUCCESS, { status: 200, headers: { "content-type": "application/json", ...headers } });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return jsonResponse(err.status, { error: err.message }, { ...headers, ...err.headers });
    }
  }

  return (
    new Elysia({ name: "ingest-scores" })
      // x-request-id: set by httpBasics (mounted globally by the ingest app) before this runs.
      .post(
        PATH,
        ({ request, set, server }) =>
          ingestScore(request, String(set.headers["x-request-id"] ?? ""), server?.requestIP(request)?.address),
        { parse: "none" },
      )
      .options(PATH, ({ request }) => preflightResponse(request))
      .all(PATH, ({ request }) => {
        throw methodNotAllowed(request.method, PATH);
      })
  );
}
