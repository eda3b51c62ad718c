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
