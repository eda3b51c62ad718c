import { HttpError, serviceUnavailable, unauthorized } from "@cellar/shared/errors";
import type { KeyResolver, ResolvedKey } from "@cellar/shared/auth/keys";
import type { Logger } from "@cellar/shared/logger";
import { createLastKnownKeys } from "./last-known-keys.ts";

/** Headers a browser may read from our responses (the SDK needs Retry-After and the limits). */
const EXPOSED = "x-request-id, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset, ratelimit-policy";
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export interface Authenticated {
  key: ResolvedKey;
  /** CORS headers for this response: set only when a client DSN is used from a permitted origin. */
  cors: Record<string, string>;
}

// RFC 6750: the scheme is case-insensitive; a token never contains whitespace.
const BEARER = /^bearer +([^\s]+) *$/i;

/**
 * Contract, Authentication rules 1-4. Every authentication failure is the same bare 401; origin
 * rules are 403. Browser requests (those with an Origin header) are allowed only for client DSNs:
 * telemetry keys and server DSNs are secrets and must not ship in a browser bundle.
 */
export function createAuthenticator(keys: KeyResolver, logger: Logger, lastKnown = createLastKnownKeys()) {
  /** `client`: the caller's address, for the per-address limit on unknown-key lookups. */
  return async function authenticate(request: Request, client?: string): Promise<Authenticated> {
    const match = BEARER.exec(request.headers.get("authorization") ?? "");
    if (!match) throw unauthorized();
    const token = match[1];
    const lookup = keys.resolve(token, client);
    // Whenever the lookup settles, even after we stopped waiting, its answer is what we remember.
    lookup.then(
      (k) => (k ? lastKnown.remember(token, k) : lastKnown.forget(token)),
      () => {},
    );
    // Postgres away or slow: a key seen valid lately still works (issue 12: ingest needs only
    // NATS), after a short wait instead of the whole lookup bound.
    const known = lastKnown.recall(token);
    let key: ResolvedKey | null;
    try {
      key = await withinLookupTime(lookup, known ? KNOWN_KEY_WAIT_MS : KEY_LOOKUP_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof HttpError) throw err; // the per-address limit's 429
      key = known;
      if (!key) {
        logger.warn("key lookup failed", { err: err as Error });
        throw serviceUnavailable("authentication temporarily unavailable, retry later", 2);
      }
    }
    if (!key || key.kind === "platform") throw unauthorized();
    return { key, cors: originPolicy(key, request.headers.get("origin")) };
  };
}

/**
 * A Postgres that stopped answering (SIGSTOP, a network partition) holds a query forever; the
 * client gets a 503 within this bound instead of a hang (issue 12: never hang past a few seconds).
 */
export const KEY_LOOKUP_TIMEOUT_MS = 3_000;
/** How long a key this instance saw valid lately waits for Postgres before it is taken as known. */
export const KNOWN_KEY_WAIT_MS = 250;

function withinLookupTime<T>(lookup: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`key lookup took longer than ${ms} ms`)), ms);
  });
  return Promise.race([lookup, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The CORS headers for this response, or a 403. A 403 to a browser carries CORS headers too, so
 * the page's SDK can read why (its onError hook) instead of seeing an opaque network error it
 * would retry; the answer says nothing about the key beyond the origin rule.
 */
function originPolicy(key: ResolvedKey, origin: string | null): Record<string, string> {
  const refuse = (message: string) => new HttpError(403, message, origin === null ? {} : corsHeaders(origin));
  if (key.kind !== "dsn-client") {
    if (origin !== null)
      throw refuse(
        "this credential is for servers and is refused from browsers (request has an Origin header); use a client DSN (svc-ing-c-...)",
      );
    return {};
  }
  const allowed = key.allowedOrigins?.length ? key.allowedOrigins : null;
  if (origin === null) {
    if (allowed)
      throw refuse("this client DSN is restricted to its allowed origins and the request has no Origin header");
    return {};
  }
  if (allowed && !allowed.some((o) => o.toLowerCase() === origin.toLowerCase())) {
    throw refuse(`origin ${JSON.stringify(origin.slice(0, 200))} is not in this DSN's allowed origins`);
  }
  return corsHeaders(origin);
}

function corsHeaders(origin: string): Record<string, string> {
  return { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED, vary: "Origin" };
}

/**
 * Preflights carry no Authorization header, so they cannot tell which DSN will follow: every
 * origin gets a positive answer and the allowed_origins rule is enforced on the POST itself.
 */
export function preflightResponse(request: Request): Response {
  const origin = request.headers.get("origin");
  const headers: Record<string, string> = { allow: "POST, OPTIONS" };
  if (origin !== null) {
    Object.assign(headers, {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "POST, OPTIONS",
      "access-control-allow-headers": "authorization, content-type, x-request-id",
      "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
      vary: "Origin",
    });
  }
  return new Response(null, { status: 204, headers });
}

export function methodNotAllowed(method: string, path: string): HttpError {
  return new HttpError(405, `method ${method} is not allowed on ${path}; use POST`, { allow: "POST, OPTIONS" });
}
