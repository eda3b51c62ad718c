import type postgres from "postgres";
import type { SessionRow, TraceRow } from "../maturation/mature";
import { buildTranscript, type EventInput, type TraceInput, type TranscriptItem } from "./transcript";

/** Per-read item cap: a session with more items is stored up to the cap and marked truncated. */
export const TRANSCRIPT_ITEM_CAP = 5_000;

export interface SessionAnalysis {
  items: TranscriptItem[];
  truncated: boolean;
  throughActivitySeq: number;
  throughIngestedAt: Date;
  metrics: Record<string, unknown>;
  rollup: { durationMs: number; turns: number; modelCalls: number; toolCalls: number; totalTokens: number; errors: number; problems: number; costUsd: number | null };
}

/** Loads everything the session produced and computes the analysis (inside the maturation tx). */
export async function analyzeSession(tx: postgres.TransactionSql, s: SessionRow): Promise<SessionAnalysis> {
  const [meta] = await tx<{ activity_seq: number; last_ingested_at: Date }[]>`
    select activity_seq, last_ingested_at from sessions where id = ${s.id}`;
  const traces = await tx<{ trace_id: string; start_time: Date; end_time: Date; payload: Record<string, any> }[]>`
    select trace_id, start_time, end_time, payload from traces where session_pk = ${s.id} order by start_time, trace_id`;
  const events = await tx<{ id: string; name: string; timestamp: Date; severity_number: number | null; attributes: Record<string, unknown>; body: Record<string, unknown> | null; trace_id: string | null }[]>`
    select id, name, timestamp, severity_number, attributes, body, trace_id from events where session_pk = ${s.id} order by timestamp, id`;
  const traceInputs: TraceInput[] = traces.map((t) => ({ traceId: t.trace_id, startTime: new Date(t.start_time), endTime: new Date(t.end_time), payload: t.payload }));
  const eventInputs: EventInput[] = events.map((e) => ({ id: e.id, name: e.name, timestamp: new Date(e.timestamp), severityNumber: e.severity_number, attributes: e.attributes, body: e.body, traceId: e.trace_id }));
  const all = buildTranscript(traceInputs, eventInputs);
  const items = all.slice(0, TRANSCRIPT_ITEM_CAP);

  let promptTokens = 0, completionTokens = 0, totalTokens = 0, modelCalls = 0;
  for (const t of traces) {
    for (const r of (t.payload.responses ?? []) as any[]) {
      modelCalls++;
      promptTokens += r?.usage?.prompt_tokens ?? 0;
      completionTokens += r?.usage?.completion_tokens ?? 0;
      totalTokens += r?.usage?.total_tokens ?? 0;
    }
  }
  const times = [...traceInputs.flatMap((t) => [t.startTime.getTime(), t.endTime.getTime()]), ...eventInputs.map((e) => e.timestamp.getTime())];
  const durationMs = times.length ? Math.max(...times) - Math.min(...times) : 0;
  const turns = all.filter((i) => i.type === "user").length;
  const toolCalls = all.filter((i) => i.type === "tool_call").length;
  const errors = events.filter((e) => (e.severity_number ?? 0) >= 17).length;
  return {
    items,
    truncated: all.length > items.length,
    throughActivitySeq: Number(meta.activity_seq),
    throughIngestedAt: new Date(meta.last_ingested_at),
    metrics: { durationMs, turns, modelCalls, toolCalls, promptTokens, completionTokens, totalTokens, errors, traces: traces.length, events: events.length },
    rollup: { durationMs, turns, modelCalls, toolCalls, totalTokens, errors, problems: 0, costUsd: null },
  };
}

/** Replaces the session's materialization with this analysis. */
export async function persistSessionAnalysis(tx: postgres.TransactionSql, s: SessionRow, a: SessionAnalysis): Promise<void> {
  await tx`delete from transcript_items where session_pk = ${s.id}`;
  const rows = a.items.map((item, position) => ({
    session_pk: s.id, position, tenant_id: s.tenant_id, item_id: item.id, kind: item.type, role: item.role,
    timestamp: item.timestamp, trace_id: item.traceId, span_id: item.spanId, item,
  }));
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    await tx`
      insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item)
      select session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item
      from jsonb_to_recordset(${tx.json(chunk as any)}::jsonb) as x(session_pk uuid, position int, tenant_id uuid, item_id text, kind text,
        role text, timestamp timestamptz, trace_id text, span_id text, item jsonb)
      on conflict (session_pk, item_id) do nothing`;
  }
  const r = a.rollup;
  await tx`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at,
      through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, metrics)
    values (${s.id}, ${s.tenant_id}, ${s.trace_service_id}, ${s.session_id}, ${s.maturation_count}, now(), ${a.throughIngestedAt},
      ${a.throughActivitySeq}, ${a.items.length}, ${a.truncated}, ${r.durationMs}, ${r.turns}, ${r.modelCalls}, ${r.toolCalls}, ${r.totalTokens},
      ${r.errors}, ${r.problems}, ${r.costUsd}, ${tx.json(a.metrics as any)})
    on conflict (session_pk) do update set maturation_count = excluded.maturation_count, computed_at = excluded.computed_at,
      through_ingested_at = excluded.through_ingested_at, through_activity_seq = excluded.through_activity_seq, item_count = excluded.item_count,
      truncated = excluded.truncated, duration_ms = excluded.duration_ms, turns = excluded.turns, model_calls = excluded.model_calls,
      tool_calls = excluded.tool_calls, total_tokens = excluded.total_tokens, errors = excluded.errors, problems = excluded.problems,
      cost_usd = excluded.cost_usd, metrics = excluded.metrics`;
}

export interface TraceAnalysis {
  metrics: Record<string, unknown>;
  costUsd: number | null;
}

export async function analyzeTrace(tx: postgres.TransactionSql, t: TraceRow): Promise<TraceAnalysis> {
  const [row] = await tx<{ payload: Record<string, any>; start_time: Date; end_time: Date }[]>`
    select payload, start_time, end_time from traces where id = ${t.id}`;
  const responses: any[] = row.payload.responses ?? [];
  const sum = (f: (r: any) => number) => responses.reduce((acc, r) => acc + (f(r) ?? 0), 0);
  return {
    metrics: {
      durationMs: new Date(row.end_time).getTime() - new Date(row.start_time).getTime(),
      modelCalls: responses.length,
      promptTokens: sum((r) => r?.usage?.prompt_tokens),
      completionTokens: sum((r) => r?.usage?.completion_tokens),
      totalTokens: sum((r) => r?.usage?.total_tokens),
    },
    costUsd: null,
  };
}

export async function persistTraceAnalysis(tx: postgres.TransactionSql, t: TraceRow, a: TraceAnalysis): Promise<void> {
  await tx`
    insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics)
    values (${t.id}, ${t.tenant_id}, ${t.trace_service_id}, ${t.trace_id}, now(), ${a.costUsd}, ${tx.json(a.metrics as any)})
    on conflict (trace_pk) do update set computed_at = excluded.computed_at, cost_usd = excluded.cost_usd, metrics = excluded.metrics`;
}
