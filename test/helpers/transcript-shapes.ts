import type postgres from "postgres";
import type { StoredItemRow } from "@cellar/shared/analysis/transcript-source";
import { decodePayload, encodePayload } from "@cellar/shared/db/payload-codec";
import type { TraceInput } from "../../apps/processor/src/analysis/transcript";

/**
 * A session's transcript in either stored shape (migration 0040): transcript runs (one row per
 * trace's items) or the item rows written before (one row per item). Tests read every item row
 * whatever its shape, and turn runs back into item rows to stand for a database written before.
 */

export type ItemRow = StoredItemRow & {
  session_pk: string;
  position: number;
  source_trace_pk: string | null;
  /** The stored row's version: of the item row, or of the run holding the item. */
  xmin: string;
  /** Which stored row holds it: `items:<position>` or `run:<first position>`. */
  holder: string;
};

/** Every stored item row (both shapes), by session and position, of these sessions (or all). */
export function itemRows(sql: postgres.Sql | postgres.TransactionSql, sessionPks?: string[]): Promise<ItemRow[]> {
  const all = sessionPks === undefined;
  const pks = sessionPks ?? [];
  return sql<ItemRow[]>`
    select * from (
      select session_pk, position, item_id, kind, role, timestamp, trace_id, span_id, item, source_trace_pk, source,
        xmin::text, 'items:' || position as holder
      from transcript_items where ${all} or session_pk = any(${pks}::uuid[])
      union all
      select r.session_pk, (e->>0)::int, e->>1, e->>2, e->>3, (e->>4)::timestamptz,
        e->>5, e->>6, e->7, (e->>8)::uuid, e->>9, r.xmin::text, 'run:' || r.position
      from transcript_runs r cross join lateral jsonb_array_elements(r.items) e where ${all} or r.session_pk = any(${pks}::uuid[])
    ) x order by session_pk, position`;
}

/**
 * Runs back to the item rows a database before migration 0040 holds (the same columns and
 * values the writer stored per item then, digests left null: a re-maturation rewrites them).
 */
export async function runsToItemRows(sql: postgres.Sql, sessionPks?: string[]): Promise<void> {
  const all = sessionPks === undefined;
  const pks = sessionPks ?? [];
  await sql.begin(async (tx) => {
    await tx`
      insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item, source_trace_pk, source)
      select r.session_pk, (e->>0)::int, r.tenant_id, e->>1, e->>2, e->>3, (e->>4)::timestamptz,
        e->>5, e->>6, e->7, (e->>8)::uuid, e->>9
      from transcript_runs r cross join lateral jsonb_array_elements(r.items) e where ${all} or r.session_pk = any(${pks}::uuid[])`;
    await tx`delete from transcript_runs where ${all} or session_pk = any(${pks}::uuid[])`;
  });
}

/** An item row's stored values alone (not which row holds it, nor its version): equal across shapes and rewrites. */
export const itemValues = ({ xmin: _x, holder: _h, ...values }: ItemRow) => values;

/**
 * A matured session's rows but its transcript and analysis: the session (`t0` its start), a trace
 * per payload 10 s apart with its stored payload, and the history maturation would read of them.
 */
export async function storeSessionTraces(
  sql: postgres.Sql,
  o: { tenantId: string; serviceId: string; sessionId: string; t0: number; payloads: any[] },
): Promise<{ pk: string; history: TraceInput[] }> {
  const { tenantId, serviceId, sessionId, t0 } = o;
  const [s] = await sql<{ id: string }[]>`
    insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
    values (${tenantId}, ${serviceId}, ${sessionId}, 'matured', ${new Date(t0)}, ${new Date(t0)}, ${new Date(t0)}, 1, now(), 1) returning id`;
  const history: TraceInput[] = [];
  for (const [k, p] of o.payloads.entries()) {
    const payload = { ...p, session_id: sessionId };
    const start = new Date(t0 + k * 10_000);
    payload.start_time = start.toISOString();
    payload.end_time = new Date(start.getTime() + 500).toISOString();
    const [tr] = await sql<{ id: string }[]>`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, received_at)
      values (${tenantId}, ${serviceId}, ${s.id}, ${`${sessionId}-t${k}`}, ${sessionId}, 'openai', 'gpt-4o-mini', ${start}, ${payload.end_time}, now()) returning id`;
    const payloadZ = encodePayload(payload);
    await sql`insert into trace_payloads (trace_pk, tenant_id, payload_z) values (${tr.id}, ${tenantId}, ${payloadZ})`;
    history.push({
      pk: tr.id,
      traceId: `${sessionId}-t${k}`,
      startTime: start,
      endTime: new Date(payload.end_time),
      payload: decodePayload({ payload_z: payloadZ }),
    });
  }
  return { pk: s.id, history };
}

/** Payloads of a session from templates: each trace a template, or a conversation resent whole (history). */
export function sessionPayloads(templates: any[], picks: number[], history: boolean): any[] {
  const said: any[] = [];
  return picks.map((i, k) => {
    const t = structuredClone(templates[i]);
    if (!history) return t;
    if (k === 0) said.push(t.request.messages[0]);
    said.push(...t.request.messages.slice(-2).map((m: any) => ({ ...m, content: m.content && `${m.content} #${k}` })));
    t.request.messages = [...said];
    said.push(t.responses[0].choices[0].message);
    return t;
  });
}
