import { badRequest } from "@cellar/shared/errors";
import { eventProblem, traceProblem } from "@cellar/shared/ingest-rules";
import type { EventPayload, TracePayload } from "@cellar/shared/payloads";

/**
 * Schema, rules and timestamp normalisation shared with the processor (shared/ingest-rules.ts);
 * throws a 400 naming the field. A valid body comes back with its timestamps in UTC.
 */
export function validateTrace(body: unknown): TracePayload {
  const problem = traceProblem(body);
  if (problem) throw badRequest(problem);
  return body as TracePayload;
}

export function validateEvent(body: unknown): EventPayload {
  const problem = eventProblem(body);
  if (problem) throw badRequest(problem);
  return body as EventPayload;
}

/** The only fields validation rewrites (timestamps, to their UTC form: shared/ingest-rules.ts). */
const REWRITTEN_FIELDS = ["start_time", "end_time", "timestamp"] as const;

/**
 * Validates `body` with `validate` and says whether `text`, JSON.stringify of the body as parsed,
 * is still the payload's JSON: true unless a timestamp was rewritten (most clients send UTC). The
 * publisher then builds the message around that text instead of serialising the payload again.
 */
export function validateKeepingText<T>(
  validate: (body: unknown) => T,
  body: unknown,
  text: string,
): { payload: T; payloadText: string | undefined } {
  const fields = body !== null && typeof body === "object" ? (body as Record<string, unknown>) : {};
  const before = REWRITTEN_FIELDS.map((f) => fields[f]);
  const payload = validate(body);
  const same = REWRITTEN_FIELDS.every((f, i) => fields[f] === before[i]);
  return { payload, payloadText: same ? text : undefined };
}
