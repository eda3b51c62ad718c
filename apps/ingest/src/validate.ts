import { badRequest } from "@cellar/shared/errors";
import { EventPayload, TracePayload } from "@cellar/shared/payloads";
import { compileValidator } from "@cellar/shared/validation";

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

/** OpenAI omits or nulls content only on assistant messages (tool calls, refusals). */
function checkContent(message: { role: string; content?: unknown }, field: string): void {
  if (message.role !== "assistant" && (message.content === undefined || message.content === null)) {
    throw badRequest(`invalid ${field}.content: required for role ${JSON.stringify(message.role)} (a string or an array of content parts)`);
  }
}

/** Schema plus the rules a schema cannot say; throws a 400 naming the field. */
export function validateTrace(body: unknown): TracePayload {
  const problem = schemaProblem(traceValidator, body);
  if (problem) throw badRequest(problem);
  const trace = body as TracePayload;
  if (Date.parse(trace.end_time) < Date.parse(trace.start_time)) throw badRequest("invalid end_time: must not be before start_time");
  trace.request.messages.forEach((m, i) => checkContent(m, `request.messages[${i}]`));
  trace.responses.forEach((r, i) => r.choices.forEach((c, j) => checkContent(c.message, `responses[${i}].choices[${j}].message`)));
  return trace;
}

export function validateEvent(body: unknown): EventPayload {
  const problem = schemaProblem(eventValidator, body);
  if (problem) throw badRequest(problem);
  return body as EventPayload;
}
