import { inspectJson } from "./json-limits.ts";
import {
  EventPayload,
  IngestEventMessage,
  type IngestMessage,
  IngestScoreMessage,
  IngestTraceMessage,
  ScorePayload,
  TracePayload,
} from "./payloads.ts";
import { parseInstant } from "./timestamps.ts";
import { compileValidator } from "./validation.ts";

/**
 * Everything a trace or event must meet to be stored: its TypeBox schema (payloads.ts), the
 * rules a schema cannot say, and timestamps normalised to UTC (timestamps.ts). Ingest applies it
 * at the HTTP edge; the processor applies the same functions when it decodes an INGEST message
 * (nats/catalogue.ts), so the two cannot disagree about what the pipeline can store. Each check
 * returns "invalid <field>: <reason>" or null, and normalises the payload in place when valid.
 */
const traceValidator = compileValidator(TracePayload);
const eventValidator = compileValidator(EventPayload);
const scoreValidator = compileValidator(ScorePayload);

// TypeBox's wording for patterns and unions names the regex; say what the client must send.
const FRIENDLIER: Array<[RegExp, string]> = [
  [/: expected string to match '\^.*'$/, ": must be a non-blank string without control characters"],
  [
    /\.content: expected union value$/,
    ".content: must be a string, an array of content parts (objects with a string type), or null",
  ],
  [/: expected union value$/, ": has the wrong type"],
  [/^invalid provider: expected 'openai'$/, 'invalid provider: must be "openai" (the only provider supported)'],
  [/: expected required property$/, ": required"],
];

function schemaProblem(validator: ReturnType<typeof compileValidator>, body: unknown): string | null {
  const problem = validator.firstError(body);
  if (!problem) return null;
  for (const [re, text] of FRIENDLIER) if (re.test(problem)) return problem.replace(re, text);
  return problem;
}

/**
 * Checks the named timestamp fields before the schema (so the reason is precise: "offset beyond
 * ±23:59" rather than "does not match the format") and rewrites each to its UTC form.
 * Returns the parsed instants in order, or a problem.
 */
function normalizeTimestamps(
  body: Record<string, unknown>,
  fields: readonly string[],
): { problem: string } | { at: Array<[number, number]> } {
  const at: Array<[number, number]> = [];
  for (const field of fields) {
    const value = body[field];
    if (typeof value !== "string") continue; // missing or mistyped: the schema names it
    const parsed = parseInstant(value);
    if (!parsed.ok) return { problem: `invalid ${field}: ${parsed.reason}` };
    body[field] = parsed.iso;
    at.push([parsed.seconds, parsed.micros]);
  }
  return { at };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A /raw/traces body (already inspected by inspectJson as part of the whole body). */
export function traceProblem(body: unknown): string | null {
  return traceChecks(body, true);
}

/** `schema` false: the caller already checked the TracePayload schema (inside IngestMessage). */
function traceChecks(body: unknown, schema: boolean): string | null {
  if (!isObject(body)) return "body must be a JSON object";
  const times = normalizeTimestamps(body, ["start_time", "end_time"]);
  if ("problem" in times) return times.problem;
  const problem = schema ? schemaProblem(traceValidator, body) : null;
  if (problem) return problem;
  const [[startS, startUs], [endS, endUs]] = times.at;
  if (endS < startS || (endS === startS && endUs < startUs)) return "invalid end_time: must not be before start_time";
  const trace = body as TracePayload;
  for (let i = 0; i < trace.request.messages.length; i++) {
    const p = contentProblem(trace.request.messages[i], `request.messages[${i}]`);
    if (p) return p;
  }
  for (let i = 0; i < trace.responses.length; i++) {
    const choices = trace.responses[i].choices;
    for (let j = 0; j < choices.length; j++) {
      const p = contentProblem(choices[j].message, `responses[${i}].choices[${j}].message`);
      if (p) return p;
    }
  }
  return null;
}

/** A /raw/events body (already inspected by inspectJson as part of the whole body). */
export function eventProblem(body: unknown): string | null {
  return eventChecks(body, true);
}

function eventChecks(body: unknown, schema: boolean): string | null {
  if (!isObject(body)) return "body must be a JSON object";
  const times = normalizeTimestamps(body, ["timestamp"]);
  if ("problem" in times) return times.problem;
  return schema ? schemaProblem(eventValidator, body) : null;
}

/** A /raw/scores body, or a platform score body (docs/scores.md). */
export function scoreProblem(body: unknown): string | null {
  if (!isObject(body)) return "body must be a JSON object";
  return schemaProblem(scoreValidator, body) ?? scoreTargetProblem(body);
}

/** Exactly one of session_id and trace_id: a score names one thing. */
function scoreTargetProblem(body: Record<string, unknown>): string | null {
  if ((body.session_id === undefined) === (body.trace_id === undefined))
    return "invalid session_id: give exactly one of session_id and trace_id";
  return null;
}

/** OpenAI omits or nulls content only on assistant messages (tool calls, refusals). */
function contentProblem(message: { role: string; content?: unknown }, field: string): string | null {
  if (message.role !== "assistant" && (message.content === undefined || message.content === null)) {
    return `invalid ${field}.content: required for role ${JSON.stringify(message.role)} (a string or an array of content parts)`;
  }
  return null;
}

const traceMessageValidator = compileValidator(IngestTraceMessage);
const eventMessageValidator = compileValidator(IngestEventMessage);
const scoreMessageValidator = compileValidator(IngestScoreMessage);

/**
 * The processor's check of a decoded INGEST message: the envelope, then exactly what ingest
 * applied to the body (storability walk, timestamps, schema, rules), field names under
 * `payload.`. Normalises the timestamps in place (a no-op on what ingest published).
 */
export function ingestMessageProblem(message: unknown): string | null {
  if (!isObject(message)) return "invalid body: expected an object";
  const rules = rulesOf(message.kind);
  if (!rules) return UNKNOWN_KIND;
  const inspection = inspectJson(message.payload, "/payload");
  if (!inspection.ok) return inspection.error;
  if (typeof message.receivedAt === "string") {
    const received = parseInstant(message.receivedAt);
    if (!received.ok) return `invalid receivedAt: ${received.reason}`;
    message.receivedAt = received.iso;
  }
  return rules.problem(message);
}

/** A trace or event message's body rules after the envelope: timestamps, schema, the rules a schema cannot say. */
function telemetryMessageProblem(
  message: Record<string, unknown>,
  times: readonly string[],
  validator: ReturnType<typeof compileValidator>,
  checks: (body: unknown, schema: boolean) => string | null,
): string | null {
  if (isObject(message.payload)) {
    const normalized = normalizeTimestamps(message.payload, times);
    if ("problem" in normalized) return normalized.problem.replace(/^invalid /, "invalid payload.");
  }
  const schema = schemaProblem(validator, message);
  if (schema) return schema;
  const problem = checks(message.payload, false);
  return problem ? problem.replace(/^invalid /, "invalid payload.") : null;
}

/**
 * The rules of each kind INGEST carries, by kind (the processor's message-kind registry points at
 * these: apps/processor/src/ingest/kinds.ts). `problem`: the full check after the envelope's
 * (ingestMessageProblem); `shapeProblem`: what a message ingest checked gets (ingestMessageShapeProblem).
 */
export interface IngestKindRules {
  problem(message: Record<string, unknown>): string | null;
  shapeProblem(message: Record<string, unknown>): string | null;
}

export const INGEST_KIND_RULES: Record<IngestMessage["kind"], IngestKindRules> = {
  trace: {
    problem: (m) => telemetryMessageProblem(m, ["start_time", "end_time"], traceMessageValidator, traceChecks),
    shapeProblem: (m) => envelopeShapeProblem(m) ?? traceShapeProblem(m.payload as Record<string, unknown>),
  },
  event: {
    problem: (m) => telemetryMessageProblem(m, ["timestamp"], eventMessageValidator, eventChecks),
    shapeProblem: (m) => envelopeShapeProblem(m) ?? stringsProblem(m.payload as Record<string, unknown>, EVENT_STRINGS),
  },
  score: {
    problem: (m) => {
      const problem =
        schemaProblem(scoreMessageValidator, m) ?? scoreTargetProblem(m.payload as Record<string, unknown>);
      return problem ? problem.replace(/^invalid (?!payload\.)/, "invalid payload.") : null;
    },
    // Scores, small and rare, get the full check.
    shapeProblem: (m) => ingestMessageProblem(m),
  },
};

/** The kinds INGEST carries, in the registry's order. */
export const INGEST_KINDS = Object.keys(INGEST_KIND_RULES) as Array<IngestMessage["kind"]>;

const UNKNOWN_KIND = `invalid kind: must be ${INGEST_KINDS.slice(0, -1)
  .map((k) => JSON.stringify(k))
  .join(", ")} or ${JSON.stringify(INGEST_KINDS.at(-1))}`;

/** The rules of a kind INGEST carries, or null for any other value (never a default kind). */
function rulesOf(kind: unknown): IngestKindRules | null {
  return typeof kind === "string" && Object.hasOwn(INGEST_KIND_RULES, kind)
    ? INGEST_KIND_RULES[kind as IngestMessage["kind"]]
    : null;
}

/**
 * What ingest's messages carry to say "checked": the header, and the version of these rules
 * that checked them (bump it whenever what ingest accepts changes, so a message an older ingest
 * checked is checked again in full). Set by apps/ingest/src/publish.ts on every message it
 * publishes, after exactly the checks of this module; a dead letter replayed with its original
 * headers keeps it, and its body is the one ingest checked.
 */
export const INGEST_CHECKED_HEADER = "Cellar-Checked";
export const INGEST_CHECKED = "ingest-rules/1";

const need = (ok: boolean, field: string, expected: string) => (ok ? null : `invalid ${field}: expected ${expected}`);

/**
 * The processor's check of a message ingest checked (INGEST_CHECKED): only the shape the writer
 * and the maturation walk, so a message that is not what ingest publishes (a foreign publisher
 * copying the header, a truncated body) is dead-lettered rather than written. Not the second
 * full walk (schema, storability of every string, timestamps): ingest applied exactly
 * ingestMessageProblem's rules to the body before publishing it (docs/performance.md). Scores,
 * small and rare, get the full check.
 */
export function ingestMessageShapeProblem(message: unknown): string | null {
  if (!isObject(message)) return "invalid body: expected an object";
  const rules = rulesOf(message.kind);
  return rules ? rules.shapeProblem(message) : UNKNOWN_KIND;
}

function envelopeShapeProblem(message: Record<string, unknown>): string | null {
  for (const field of ["messageId", "tenantId", "serviceName", "receivedAt"] as const) {
    const problem = need(typeof message[field] === "string", field, "string");
    if (problem) return problem;
  }
  return isObject(message.payload) ? null : "invalid payload: expected object";
}

const TRACE_STRINGS = ["session_id", "start_time", "end_time", "provider"] as const;
const EVENT_STRINGS = ["session_id", "name", "timestamp"] as const;

function stringsProblem(p: Record<string, unknown>, fields: readonly string[]): string | null {
  for (const field of fields) {
    const problem = need(typeof p[field] === "string", `payload.${field}`, "string");
    if (problem) return problem;
  }
  return null;
}

/** What the writer and the maturation walk of a trace's payload. */
function traceShapeProblem(p: Record<string, unknown>): string | null {
  const strings = stringsProblem(p, TRACE_STRINGS);
  if (strings) return strings;
  const request = p.request;
  if (!isObject(request) || typeof request.model !== "string" || !Array.isArray(request.messages))
    return "invalid payload.request: expected an object with a model and messages";
  for (let i = 0; i < request.messages.length; i++)
    if (!isObject(request.messages[i])) return `invalid payload.request.messages[${i}]: expected object`;
  if (!Array.isArray(p.responses)) return "invalid payload.responses: expected array";
  for (let i = 0; i < p.responses.length; i++) {
    const r = p.responses[i];
    if (!isObject(r) || !Array.isArray(r.choices) || !isObject(r.usage) || !r.choices.every(isObject))
      return `invalid payload.responses[${i}]: expected an object with choices (objects) and usage`;
  }
  return null;
}
