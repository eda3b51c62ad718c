import type postgres from "postgres";
import { CHOICE_EVENT, PER_MESSAGE_EVENTS } from "@cellar/shared/otlp/messages";

/**
 * Log records carry no session attribute when the instrumentation emits them (OpenTelemetry's
 * openai instrumentation writes only event.name and gen_ai.system), so they land in the session
 * named by their trace id, while their span may carry a gen_ai.conversation.id / session.id and
 * land elsewhere. Before analysis a session's model calls that are still waiting for their
 * messages get them from wherever they are, and a session does not show message events that
 * belong to a call stored in another session (docs/otlp.md, "Messages as log records").
 */
export const MESSAGE_EVENT_NAMES = [...Object.keys(PER_MESSAGE_EVENTS), CHOICE_EVENT, "gen_ai.client.inference.operation.details"];

interface TraceRow {
  session_pk: string;
  trace_id: string;
  payload: Record<string, any>;
}
interface EventRow {
  session_pk: string;
  id: string;
  name: string;
  trace_id: string | null;
}

export async function relinkOtelMessageEvents<E extends EventRow>(
  tx: postgres.TransactionSql,
  serviceOfSession: (sessionPk: string) => string,
  traces: TraceRow[],
  events: E[],
): Promise<E[]> {
  const messageNames = new Set(MESSAGE_EVENT_NAMES);
  const waiting = traces.filter((t) => t.payload?.otel?.messages === "none");
  const callKey = (service: string, traceId: string) => `${service}\u0000${traceId}`;
  let out = events;

  // 1. Messages of this batch's waiting calls that were stored in another session.
  if (waiting.length) {
    const sessionOfCall = new Map(waiting.map((t) => [callKey(serviceOfSession(t.session_pk), t.trace_id), t.session_pk]));
    const rows = await tx<(E & { trace_service_id: string })[]>`
      select e.session_pk, e.id, e.name, e.timestamp, e.severity_number, e.attributes, e.body, e.trace_id, e.trace_service_id
      from events e join jsonb_to_recordset(${tx.json(waiting.map((t) => ({ s: serviceOfSession(t.session_pk), t: t.trace_id, p: t.session_pk })) as any)}::jsonb) as x(s uuid, t text, p uuid)
        on e.trace_service_id = x.s and e.trace_id = x.t
      where e.session_pk <> x.p and e.name = any(${tx.array(MESSAGE_EVENT_NAMES)}::text[])`;
    if (rows.length) {
      out = [...out, ...rows.map(({ trace_service_id, ...e }) => ({ ...e, session_pk: sessionOfCall.get(callKey(trace_service_id, e.trace_id!))! }) as unknown as E)];
    }
  }

  // 2. Message events here whose call is stored in another session: they are that call's messages.
  const own = new Set(traces.map((t) => `${t.session_pk}\u0000${t.trace_id}`));
  const loose = out.filter((e) => e.trace_id && messageNames.has(e.name) && !own.has(`${e.session_pk}\u0000${e.trace_id}`));
  if (loose.length) {
    const elsewhere = await tx<{ s: string; t: string; p: string }[]>`
      select x.s::text as s, x.t, x.p::text as p from traces tr
      join jsonb_to_recordset(${tx.json(loose.map((e) => ({ s: serviceOfSession(e.session_pk), t: e.trace_id, p: e.session_pk })) as any)}::jsonb) as x(s uuid, t text, p uuid)
        on tr.trace_service_id = x.s and tr.trace_id = x.t
      where tr.session_pk <> x.p`;
    if (elsewhere.length) {
      const drop = new Set(elsewhere.map((r) => `${r.p}\u0000${r.t}`));
      out = out.filter((e) => !(e.trace_id && messageNames.has(e.name) && drop.has(`${e.session_pk}\u0000${e.trace_id}`)));
    }
  }
  return out;
}
