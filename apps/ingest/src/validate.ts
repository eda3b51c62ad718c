import { badRequest } from "@cellar/shared/errors";
import { EventPayload, TracePayload } from "@cellar/shared/payloads";
import { compileValidator } from "@cellar/shared/validation";
import { eventPayloadProblem, tracePayloadProblem } from "@cellar/shared/ingest-rules";

const traceValidator = compileValidator(TracePayload);
const eventValidator = compileValidator(EventPayload);

// TypeBox's wording for formats and patterns names the regex; say what the client must send.
const FRIENDLIER: Array<[RegExp, string]> = [
  [/: expected string to match 'date-time' format$/, ": must be an ISO 8601 date-time with a time zone, e.g. 2025-01-31T12:00:00.000Z"],
  [/: expected string to match '\^.*'$/, ": must be a non-blank string without control characters"],
  [/\.content: expected union value$/, ".content: must be a string, an array of content parts (objects with a string type), or null"],
  [/: expected union value$/, ": has the wrong type"],
  [/^invalid provider: expected 'openai'$/, "invalid provider: must be \"openai\" (the only provider supported)"],
  [/: expected required property$/, ": required"],
];

function schemaProblem(validator: ReturnType<typeof compileValidator>, body: unknown): string | null {
  const problem = validator.firstError(body);
  if (!problem) return null;
  for (const [re, text] of FRIENDLIER) if (re.test(problem)) return problem.replace(re, text);
  return problem;
}

/** Schema plus the rules a schema cannot say (shared with the processor); throws a 400 naming the field. */
export function validateTrace(body: unknown): TracePayload {
  const problem = schemaProblem(traceValidator, body) ?? tracePayloadProblem(body as TracePayload);
  if (problem) throw badRequest(problem);
  return body as TracePayload;
}

export function validateEvent(body: unknown): EventPayload {
  const problem = schemaProblem(eventValidator, body) ?? eventPayloadProblem(body as EventPayload);
  if (problem) throw badRequest(problem);
  return body as EventPayload;
}
