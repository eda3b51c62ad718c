import type { EventPayload, IngestMessage, TracePayload } from "./payloads";

/**
 * The rules a trace or event must meet beyond its TypeBox schema, applied by ingest at the HTTP
 * edge AND by the processor when it decodes an INGEST message (catalogue.ts): one function, so
 * the two can never disagree about what the pipeline can store. Returns "invalid <field>: ...",
 * or null when the payload is fine.
 */
export function tracePayloadProblem(trace: TracePayload): string | null {
  if (Date.parse(trace.end_time) < Date.parse(trace.start_time)) return "invalid end_time: must not be before start_time";
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

export function eventPayloadProblem(_event: EventPayload): string | null {
  return null;
}

/** OpenAI omits or nulls content only on assistant messages (tool calls, refusals). */
function contentProblem(message: { role: string; content?: unknown }, field: string): string | null {
  if (message.role !== "assistant" && (message.content === undefined || message.content === null)) {
    return `invalid ${field}.content: required for role ${JSON.stringify(message.role)} (a string or an array of content parts)`;
  }
  return null;
}

/** The processor's check of a schema-valid INGEST message (field names prefixed with `payload.`). */
export function checkIngestMessage(message: IngestMessage): string | null {
  const problem = message.kind === "trace" ? tracePayloadProblem(message.payload) : eventPayloadProblem(message.payload);
  return problem ? problem.replace(/^invalid /, "invalid payload.") : null;
}
