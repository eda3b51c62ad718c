import { errors as natsErrors } from "@nats-io/transport-node";
import { JetStreamApiError } from "@nats-io/jetstream";

/**
 * How a consumer treats a failed handler (docs/dead-letters.md):
 * - `transient`: a dependency is unavailable (Postgres or NATS down, restarting, out of
 *   connections). Nothing is wrong with the messages: keep them, back off, try again.
 * - `permanent`: the data itself is refused (Postgres classes 22 and 23 except the conflicts a
 *   concurrent writer causes). Retrying cannot help: the message at fault is dead-lettered.
 * - `retry`: anything else (a bug, a timeout, a conflict): retried with backoff up to the
 *   stream's `maxDeliver`, then dead-lettered.
 */
export type FailureKind = "transient" | "permanent" | "retry";

/** SQLSTATEs of class 23 a concurrent writer can cause: they pass on a retry. */
const EXPECTED_CONFLICTS = new Set(["23505", "23P01"]);
/** Connection-level errors of postgres.js and the OS. */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** The SQLSTATE of a Postgres server error, or undefined. */
export function sqlState(err: unknown): string | undefined {
  const e = err as { name?: string; code?: unknown } | null;
  if (!e || typeof e !== "object" || typeof e.code !== "string") return undefined;
  return e.name === "PostgresError" || /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
}

export function classifyFailure(err: unknown): FailureKind {
  if (err instanceof PermanentMessageError) return "permanent";
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return "transient";
  const state = sqlState(err);
  if (state) {
    // 08 connection exception, 53 insufficient resources, 57P01-3 shutdown/cannot connect now,
    // 58 system error (I/O): the server, not the data.
    if (state.startsWith("08") || state.startsWith("53") || /^57P0[123]$/.test(state) || state.startsWith("58"))
      return "transient";
    if (state.startsWith("22")) return "permanent";
    if (state.startsWith("23")) return EXPECTED_CONFLICTS.has(state) ? "retry" : "permanent";
    return "retry";
  }
  if (
    err instanceof natsErrors.TimeoutError ||
    err instanceof natsErrors.ConnectionError ||
    err instanceof natsErrors.ClosedConnectionError ||
    err instanceof natsErrors.DrainingConnectionError ||
    err instanceof natsErrors.NoRespondersError ||
    err instanceof natsErrors.RequestError
  )
    return "transient";
  // 503: JetStream has no quorum or no responders for the API right now.
  if (err instanceof JetStreamApiError && err.status === 503) return "transient";
  // "jetstream is not enabled": what a cluster node answers while it restarts (issue 41's chaos
  // run, a NATS node lost: 139 of them in one run, each counted toward parking a session).
  // (The class is exported only from the package's internal entry: matched by name.)
  if ((err as Error | null)?.name === "JetStreamNotEnabled") return "transient";
  return "retry";
}

/** Thrown by a handler to say "this message can never succeed" (it is dead-lettered at once). */
export class PermanentMessageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PermanentMessageError";
  }
}

/** One line for logs and dead-letter headers: SQLSTATE and message, no newlines, bounded. */
export function describeFailure(err: unknown): string {
  const state = sqlState(err);
  const text = err instanceof Error ? err.message : String(err);
  return `${state ? `${state} ` : ""}${text}`.replace(/[\r\n]+/g, " ").slice(0, 1000);
}
