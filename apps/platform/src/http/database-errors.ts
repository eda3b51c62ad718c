import { serviceUnavailable, type HttpError } from "@cellar/shared/errors";

/** Retry-After for a database that is unreachable (seconds): reconnects are cheap, come back soon. */
export const DATABASE_DOWN_RETRY_AFTER_SECONDS = 5;
/** Retry-After for a read cancelled by the statement timeout: the load that slowed it may linger. */
export const SLOW_QUERY_RETRY_AFTER_SECONDS = 10;

// postgres.js connection failures (its own codes and the socket's errno).
const CONNECTION_CODES = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
// SQLSTATEs: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections.
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300"]);
const QUERY_CANCELED = "57014"; // statement_timeout

/**
 * A Postgres failure the caller can do nothing about but retry: 503 with Retry-After (the
 * platform's analogue of ingest's 503 while NATS is down). drizzle wraps the driver's error in
 * `cause`, so the chain is walked. Anything else stays the catch-all 500.
 */
export function databaseTrouble(error: unknown): HttpError | undefined {
  for (
    let e = error, depth = 0;
    e && typeof e === "object" && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    if (code === QUERY_CANCELED)
      return serviceUnavailable(
        "the query took too long; retry later or narrow the request",
        SLOW_QUERY_RETRY_AFTER_SECONDS,
      );
    if (CONNECTION_CODES.has(code) || UNAVAILABLE_STATES.has(code))
      return serviceUnavailable("database unavailable, retry later", DATABASE_DOWN_RETRY_AFTER_SECONDS);
  }
  return undefined;
}
