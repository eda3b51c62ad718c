import { Elysia } from "elysia";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { badRequest } from "@cellar/shared/errors";
import { platformAuth } from "../auth/plugin.ts";
import type { SignInTokens } from "../auth/principal.ts";
import type { PlatformLimiter } from "../http/limits.ts";
import { doc } from "../http/schemas.ts";
import {
  DEAD_LETTER_LIMITS,
  listTenantDeadLetters,
  replayTenantDeadLetter,
  replayTenantDeadLetters,
  type DeadLetterAccess,
} from "./service.ts";
import { DeadLetterList, ReplayResult } from "./model.ts";

const TAG = "Dead letters";
const UNAVAILABLE = "503 (with Retry-After) when the platform has no NATS connection or Postgres is unavailable.";
const UNCOUNTED =
  "A replay counts the dead letter in the ledger before deleting it (503 when Postgres is unavailable; a platform built without that count answers 503 with Retry-After: 5 while the ledger has not counted it yet, and keeps it; docs/ledger.md)";

export interface DeadLetterRouteDeps {
  keys: KeyResolver;
  signIns?: SignInTokens;
  limiter?: PlatformLimiter;
  /** JetStream for DEAD_LETTERS; without it every route answers 503. */
  deadLetters?: DeadLetterAccess;
}

const seqParam = (v: string): number => {
  if (!/^[1-9]\d{0,15}$/.test(v)) throw badRequest("invalid seq: must be a positive integer");
  return Number(v);
};

/**
 * /dead-letters (docs/dead-letters.md, "In the dashboard"): the tenant's telemetry that ingest
 * answered as stored and the processor set aside, and replaying it. Role admin or owner;
 * every answer is scoped to the key's tenant (another tenant's dead letter is a missing one).
 */
export function deadLetterRoutes(deps: DeadLetterRouteDeps) {
  return new Elysia({ prefix: "/dead-letters" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get("", ({ principal }) => listTenantDeadLetters(deps.deadLetters, principal), {
      detail: doc(TAG, "Your tenant's ingested data the pipeline set aside", DeadLetterList, {
        errors: [401, 403, 429, 503],
        description: `403 below role admin. ${UNAVAILABLE}`,
      }),
    })
    .post("/replay", ({ principal }) => replayTenantDeadLetters(deps.deadLetters, principal), {
      detail: doc(TAG, "Replay your tenant's dead letters, oldest first", ReplayResult, {
        errors: [400, 401, 403, 413, 429, 503],
        description: `At most ${DEAD_LETTER_LIMITS.REPLAYED_PER_CALL} per call; \`more\` says some remain (also when the next is not counted by the ledger yet). ${UNAVAILABLE} ${UNCOUNTED}, when it is the first. 400 and 413 for a body that is not JSON or too large (none is needed).`,
      }),
    })
    .post(
      "/:seq/replay",
      ({ principal, params }) => replayTenantDeadLetter(deps.deadLetters, principal, seqParam(params.seq)),
      {
        detail: doc(TAG, "Replay one dead letter", ReplayResult, {
          errors: [400, 401, 403, 404, 413, 429, 503],
          description: `404 when it is not one of your tenant's ingest dead letters (or was replayed already). 400 for a seq that is not a positive integer (or a body that is not JSON). ${UNAVAILABLE} ${UNCOUNTED}.`,
        }),
      },
    );
}
