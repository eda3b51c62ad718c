import type postgres from "postgres";
import type { SessionRow, TraceRow } from "../maturation/mature";
import { extractCalls } from "./calls";
import { mergeOtelMessageEvents } from "../otlp/merge";
import { relinkOtelMessageEvents } from "../otlp/linked";
import { loadPriceBooks } from "@cellar/shared/pricing/tenant";
import type { PriceBook } from "@cellar/shared/pricing/table";
import { extractToolSchemas, loadIntentDefinitions, matchIntents, persistIntents, persistToolSchemas, type IntentMatch, type ToolSchemaSeen } from "./catalog";
import { detectProblems, type Finding, type LatencyNorms } from "./detectors";
import { persistFindings } from "./findings";
import { callMetrics, costByModel, sessionMetrics, toolCosts, type CostByModel, type ToolCost } from "./metrics";
import { extractiveTldr, type TldrFacts } from "./tldr";
import { buildTranscript, type EventInput, type TraceInput, type TranscriptItem } from "./transcript";

/** Per-read item cap: a session with more items is stored up to the cap and marked truncated. */
export const TRANSCRIPT_ITEM_CAP = 5_000;

export interface AnalysisOptions {
  latencyNorms?: (traceServiceId: string) => Promise<LatencyNorms>;
}

export interface SessionAnalysis {
  items: TranscriptItem[];
  truncated: boolean;
  throughActivitySeq: number;
  throughIngestedAt: Date;
  metrics: ReturnType<typeof sessionMetrics>;
  costByModel: CostByModel[];
  toolCosts: ToolCost[];
  findings: Finding[];
  toolSchemas: ToolSchemaSeen[];
  intents: IntentMatch[];
  tldr: string;
  tldrFacts: TldrFacts;
}

type TraceRowData = { session_pk: string; trace_id: string; start_time: Date; end_time: Date; payload: Record<string, any> };
type EventRowData = { session_pk: string; id: string; name: string; timestamp: Date; severity_number: number | null; attributes: Record<string, unknown>; body: Record<string, unknown> | null; trace_id: string | null };

/**
 * Loads everything a batch of sessions produced (one query per table, not per session) and
 * computes each one's analysis, inside the maturation transaction.
 */
export async function analyzeSessions(tx: postgres.TransactionSql, sessions: SessionRow[], opts: AnalysisOptions = {}): Promise<Map<string, SessionAnalysis>> {
  const ids = sessions.map((s) => s.id);
  const serviceIds = [...new Set(sessions.map((s) => s.trace_service_id))];
  const [metas, traces, storedEvents, intentDefs, norms, pricesOf] = await Promise.all([
    tx<{ id: string; activity_seq: number; last_ingested_at: Date }[]>`select id, activity_seq, last_ingested_at from sessions where id = any(${tx.array(ids)}::uuid[])`,
    tx<TraceRowData[]>`select session_pk, trace_id, start_time, end_time, payload from traces where session_pk = any(${tx.array(ids)}::uuid[]) order by start_time, trace_id`,
    tx<EventRowData[]>`select session_pk, id, name, timestamp, severity_number, attributes, body, trace_id from events where session_pk = any(${tx.array(ids)}::uuid[]) order by timestamp, id`,
    loadIntentDefinitions(tx, serviceIds),
    Promise.all(serviceIds.map(async (id) => [id, await opts.latencyNorms?.(id)] as const)),
    loadPriceBooks(tx, sessions.map((s) => s.tenant_id)),
  ]);
  const serviceOf = new Map(sessions.map((s) => [s.id, s.trace_service_id]));
  const events = await relinkOtelMessageEvents(tx, (pk) => serviceOf.get(pk)!, traces, storedEvents); // OTLP log records, docs/otlp.md
  const group = <T extends { session_pk: string }>(rows: T[]) => {
    const out = new Map<string, T[]>();
    for (const r of rows) {
      const list = out.get(r.session_pk);
      if (list) list.push(r);
      else out.set(r.session_pk, [r]);
    }
    return out;
  };
  const tracesOf = group(traces);
  const eventsOf = group(events);
  const metaOf = new Map(metas.map((m) => [m.id, m]));
  const normsOf = new Map(norms);
  const out = new Map<string, SessionAnalysis>();
  for (const s of sessions) {
    const traceInputs: TraceInput[] = (tracesOf.get(s.id) ?? []).map((t) => ({ traceId: t.trace_id, startTime: new Date(t.start_time), endTime: new Date(t.end_time), payload: t.payload }));
    const eventInputs: EventInput[] = (eventsOf.get(s.id) ?? []).map((e) => ({ id: e.id, name: e.name, timestamp: new Date(e.timestamp), severityNumber: e.severity_number, attributes: e.attributes, body: e.body, traceId: e.trace_id }));
    const computed = computeSessionAnalysis(traceInputs, eventInputs, normsOf.get(s.trace_service_id) ?? undefined, pricesOf(s.tenant_id));
    const meta = metaOf.get(s.id)!;
    out.set(s.id, {
      ...computed,
      throughActivitySeq: Number(meta.activity_seq),
      throughIngestedAt: new Date(meta.last_ingested_at),
      toolSchemas: await extractToolSchemas(traceInputs),
      intents: matchIntents(computed.items, intentDefs.get(s.trace_service_id) ?? []),
    });
  }
  return out;
}

/** The pure part of the analysis (what unit tests call). */
export function computeSessionAnalysis(traces: TraceInput[], events: EventInput[], latencyNorms?: LatencyNorms, prices?: PriceBook) {
  ({ traces, events } = mergeOtelMessageEvents(traces, events)); // OTLP calls whose messages came as log records
  const transcript = buildTranscript(traces, events);
  const all = transcript.items;
  const items = all.slice(0, TRANSCRIPT_ITEM_CAP);
  const calls = extractCalls(traces, transcript, prices);
  const findings = detectProblems({ calls, items: all, events, impliedAnswered: transcript.impliedAnswered, latencyNorms });
  const times = [...traces.flatMap((t) => [t.startTime.getTime(), t.endTime.getTime()]), ...events.map((e) => e.timestamp.getTime())];
  const span = times.length ? { first: Math.min(...times), last: Math.max(...times) } : null;
  const metrics = sessionMetrics(calls, all, events, traces.length, findings.length, span);
  const tldrFacts: TldrFacts = { items, turns: metrics.turns, modelCalls: metrics.modelCalls, toolCalls: metrics.toolCalls, totalTokens: metrics.totalTokens, costUsd: metrics.costUsd, findings };
  return {
    items, truncated: all.length > items.length, metrics, costByModel: costByModel(calls), toolCosts: toolCosts(calls), findings,
    tldr: extractiveTldr(tldrFacts), tldrFacts,
  };
}

export interface Materialization {
  row: SessionRow;
  analysis: SessionAnalysis;
  /** An earlier materialization exists and is replaced. */
  replace: boolean;
}

/** Rough JSON size of a transcript chunk: keeps one statement's parameter under a few MB. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/** Replaces the materialization of a batch of sessions: multi-row statements, not per session. */
export async function persistSessionAnalyses(tx: postgres.TransactionSql, list: Materialization[]): Promise<void> {
  if (list.length === 0) return;
  const replaced = list.filter((m) => m.replace).map((m) => m.row.id);
  if (replaced.length) await tx`delete from transcript_items where session_pk = any(${tx.array(replaced)}::uuid[])`;
  let chunk: Record<string, unknown>[] = [];
  let bytes = 0;
  const flush = async () => {
    if (!chunk.length) return;
    const rows = chunk;
    chunk = [];
    bytes = 0;
    await tx`
      insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item)
      select session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item
      from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(session_pk uuid, position int, tenant_id uuid, item_id text, kind text,
        role text, timestamp timestamptz, trace_id text, span_id text, item jsonb)
      on conflict (session_pk, item_id) do nothing`;
  };
  for (const { row: s, analysis } of list) {
    for (let position = 0; position < analysis.items.length; position++) {
      const item = analysis.items[position];
      chunk.push({ session_pk: s.id, position, tenant_id: s.tenant_id, item_id: item.id, kind: item.type, role: item.role, timestamp: item.timestamp, trace_id: item.traceId, span_id: item.spanId, item });
      bytes += 300 + approxSize(item.content) + approxSize(item.reasoning);
      if (chunk.length >= 2_000 || bytes >= CHUNK_BYTES) await flush();
    }
  }
  await flush();
  const clampInt = (n: number) => Math.min(Math.max(0, Math.round(n)), 2_147_483_647);
  const rows = list.map(({ row: s, analysis: a }) => {
    const m = a.metrics;
    return {
      session_pk: s.id, tenant_id: s.tenant_id, trace_service_id: s.trace_service_id, session_id: s.session_id, maturation_count: s.maturation_count,
      through_ingested_at: a.throughIngestedAt.toISOString(), through_activity_seq: a.throughActivitySeq, item_count: a.items.length, truncated: a.truncated,
      duration_ms: clampInt(m.durationMs), turns: m.turns, model_calls: m.modelCalls, tool_calls: m.toolCalls, total_tokens: clampInt(m.totalTokens),
      errors: m.errors, problems: m.problems, cost_usd: m.costUsd, metrics: m, cost_by_model: a.costByModel, tool_costs: a.toolCosts, tldr: a.tldr,
    };
  });
  await tx`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at,
      through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, metrics,
      cost_by_model, tool_costs, tldr, tldr_source)
    select session_pk, tenant_id, trace_service_id, session_id, maturation_count, now(), through_ingested_at,
      through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, metrics,
      cost_by_model, tool_costs, tldr, 'extractive'
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(session_pk uuid, tenant_id uuid, trace_service_id uuid, session_id text,
      maturation_count int, through_ingested_at timestamptz, through_activity_seq bigint, item_count int, truncated boolean, duration_ms int,
      turns int, model_calls int, tool_calls int, total_tokens int, errors int, problems int, cost_usd float8, metrics jsonb, cost_by_model jsonb,
      tool_costs jsonb, tldr text)
    order by session_pk
    on conflict (session_pk) do update set maturation_count = excluded.maturation_count, computed_at = excluded.computed_at,
      through_ingested_at = excluded.through_ingested_at, through_activity_seq = excluded.through_activity_seq, item_count = excluded.item_count,
      truncated = excluded.truncated, duration_ms = excluded.duration_ms, turns = excluded.turns, model_calls = excluded.model_calls,
      tool_calls = excluded.tool_calls, total_tokens = excluded.total_tokens, errors = excluded.errors, problems = excluded.problems,
      cost_usd = excluded.cost_usd, metrics = excluded.metrics, cost_by_model = excluded.cost_by_model, tool_costs = excluded.tool_costs,
      tldr = excluded.tldr, tldr_source = excluded.tldr_source`;
  await persistToolSchemas(tx, list.map((m) => ({ row: m.row, schemas: m.analysis.toolSchemas, replace: m.replace })));
  await persistIntents(tx, list.map((m) => ({ row: m.row, matches: m.analysis.intents, replace: m.replace })));
  // Last: issue rows are shared by every session with the same problem; lock them as late as possible.
  await persistFindings(tx, list.map((m) => ({ row: m.row, findings: m.analysis.findings, replace: m.replace })));
}

function approxSize(v: unknown): number {
  if (v == null) return 0;
  if (typeof v === "string") return v.length;
  return JSON.stringify(v).length;
}

export interface TraceAnalysis {
  metrics: Record<string, unknown>;
  costUsd: number | null;
}

/** Per-trace metrics: the same call metrics as a session, over each trace's responses. */
export async function analyzeTraces(tx: postgres.TransactionSql, rows: TraceRow[]): Promise<Map<string, TraceAnalysis>> {
  // Call metrics need the responses and the model, not the request's history: load only those.
  const loaded = await tx<{ id: string; trace_id: string; payload: Record<string, any>; start_time: Date; end_time: Date }[]>`
    select id, trace_id, start_time, end_time,
      jsonb_build_object('request', jsonb_build_object('model', payload->'request'->'model'), 'responses', payload->'responses') as payload
    from traces where id = any(${tx.array(rows.map((r) => r.id))}::uuid[])`;
  const noHistory = { items: [], consumedToolsByTrace: new Map<string, string[]>(), impliedAnswered: new Set<string>() };
  const pricesOf = await loadPriceBooks(tx, rows.map((r) => r.tenant_id));
  const tenantOf = new Map(rows.map((r) => [r.id, r.tenant_id]));
  const out = new Map<string, TraceAnalysis>();
  for (const row of loaded) {
    const input: TraceInput = { traceId: row.trace_id, startTime: new Date(row.start_time), endTime: new Date(row.end_time), payload: row.payload };
    const calls = extractCalls([input], noHistory, pricesOf(tenantOf.get(row.id)!));
    const metrics = { durationMs: input.endTime.getTime() - input.startTime.getTime(), ...callMetrics(calls) };
    out.set(row.id, { metrics: { ...metrics, costByModel: costByModel(calls) }, costUsd: metrics.costUsd });
  }
  return out;
}

export async function persistTraceAnalyses(tx: postgres.TransactionSql, list: Array<{ row: TraceRow; analysis: TraceAnalysis }>): Promise<void> {
  if (list.length === 0) return;
  const rows = list.map(({ row: t, analysis: a }) => ({ trace_pk: t.id, tenant_id: t.tenant_id, trace_service_id: t.trace_service_id, trace_id: t.trace_id, cost_usd: a.costUsd, metrics: a.metrics }));
  await tx`
    insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics)
    select trace_pk, tenant_id, trace_service_id, trace_id, now(), cost_usd, metrics
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(trace_pk uuid, tenant_id uuid, trace_service_id uuid, trace_id text, cost_usd float8, metrics jsonb)
    order by trace_pk
    on conflict (trace_pk) do update set computed_at = excluded.computed_at, cost_usd = excluded.cost_usd, metrics = excluded.metrics`;
}
