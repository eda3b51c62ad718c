import type postgres from "postgres";
import type { SessionRow, TraceRow } from "../maturation/mature";
import { extractCalls } from "./calls";
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

type TraceRowData = { trace_id: string; start_time: Date; end_time: Date; payload: Record<string, any> };
type EventRowData = { id: string; name: string; timestamp: Date; severity_number: number | null; attributes: Record<string, unknown>; body: Record<string, unknown> | null; trace_id: string | null };

/** Loads everything the session produced and computes the analysis (inside the maturation tx). */
export async function analyzeSession(tx: postgres.TransactionSql, s: SessionRow, opts: AnalysisOptions = {}): Promise<SessionAnalysis> {
  const [[meta], traces, events, intentDefs, norms] = await Promise.all([
    tx<{ activity_seq: number; last_ingested_at: Date }[]>`select activity_seq, last_ingested_at from sessions where id = ${s.id}`,
    tx<TraceRowData[]>`select trace_id, start_time, end_time, payload from traces where session_pk = ${s.id} order by start_time, trace_id`,
    tx<EventRowData[]>`select id, name, timestamp, severity_number, attributes, body, trace_id from events where session_pk = ${s.id} order by timestamp, id`,
    loadIntentDefinitions(tx, s.trace_service_id),
    opts.latencyNorms?.(s.trace_service_id),
  ]);
  const traceInputs: TraceInput[] = traces.map((t) => ({ traceId: t.trace_id, startTime: new Date(t.start_time), endTime: new Date(t.end_time), payload: t.payload }));
  const eventInputs: EventInput[] = events.map((e) => ({ id: e.id, name: e.name, timestamp: new Date(e.timestamp), severityNumber: e.severity_number, attributes: e.attributes, body: e.body, traceId: e.trace_id }));
  const computed = computeSessionAnalysis(traceInputs, eventInputs, norms ?? undefined);
  return {
    ...computed,
    throughActivitySeq: Number(meta.activity_seq),
    throughIngestedAt: new Date(meta.last_ingested_at),
    toolSchemas: await extractToolSchemas(traceInputs),
    intents: matchIntents(computed.items, intentDefs),
  };
}

/** The pure part of the analysis (what unit tests call). */
export function computeSessionAnalysis(traces: TraceInput[], events: EventInput[], latencyNorms?: LatencyNorms) {
  const transcript = buildTranscript(traces, events);
  const all = transcript.items;
  const items = all.slice(0, TRANSCRIPT_ITEM_CAP);
  const calls = extractCalls(traces, transcript);
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

/** Replaces the session's materialization with this analysis. `replace`: an earlier one exists. */
export async function persistSessionAnalysis(tx: postgres.TransactionSql, s: SessionRow, a: SessionAnalysis, replace = true): Promise<void> {
  if (replace) await tx`delete from transcript_items where session_pk = ${s.id}`;
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
  const m = a.metrics;
  await tx`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at,
      through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, metrics,
      cost_by_model, tool_costs, tldr, tldr_source)
    values (${s.id}, ${s.tenant_id}, ${s.trace_service_id}, ${s.session_id}, ${s.maturation_count}, now(), ${a.throughIngestedAt},
      ${a.throughActivitySeq}, ${a.items.length}, ${a.truncated}, ${Math.min(m.durationMs, 2_147_483_647)}, ${m.turns}, ${m.modelCalls}, ${m.toolCalls},
      ${Math.min(m.totalTokens, 2_147_483_647)}, ${m.errors}, ${m.problems}, ${m.costUsd}, ${tx.json(m as any)}, ${tx.json(a.costByModel as any)},
      ${tx.json(a.toolCosts as any)}, ${a.tldr}, 'extractive')
    on conflict (session_pk) do update set maturation_count = excluded.maturation_count, computed_at = excluded.computed_at,
      through_ingested_at = excluded.through_ingested_at, through_activity_seq = excluded.through_activity_seq, item_count = excluded.item_count,
      truncated = excluded.truncated, duration_ms = excluded.duration_ms, turns = excluded.turns, model_calls = excluded.model_calls,
      tool_calls = excluded.tool_calls, total_tokens = excluded.total_tokens, errors = excluded.errors, problems = excluded.problems,
      cost_usd = excluded.cost_usd, metrics = excluded.metrics, cost_by_model = excluded.cost_by_model, tool_costs = excluded.tool_costs,
      tldr = excluded.tldr, tldr_source = excluded.tldr_source`;
  await persistFindings(tx, s, a.findings, replace);
  await persistToolSchemas(tx, s, a.toolSchemas, replace);
  await persistIntents(tx, s, a.intents, replace);
}

export interface TraceAnalysis {
  metrics: Record<string, unknown>;
  costUsd: number | null;
}

/** Per-trace metrics: the same call metrics as a session, over this trace's responses. */
export async function analyzeTrace(tx: postgres.TransactionSql, t: TraceRow): Promise<TraceAnalysis> {
  const [row] = await tx<{ payload: Record<string, any>; start_time: Date; end_time: Date }[]>`
    select payload, start_time, end_time from traces where id = ${t.id}`;
  const input: TraceInput = { traceId: t.trace_id, startTime: new Date(row.start_time), endTime: new Date(row.end_time), payload: row.payload };
  const transcript = buildTranscript([input], []);
  const calls = extractCalls([input], transcript);
  const metrics = { durationMs: input.endTime.getTime() - input.startTime.getTime(), ...callMetrics(calls) };
  return { metrics: { ...metrics, costByModel: costByModel(calls) }, costUsd: metrics.costUsd };
}

export async function persistTraceAnalysis(tx: postgres.TransactionSql, t: TraceRow, a: TraceAnalysis): Promise<void> {
  await tx`
    insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics)
    values (${t.id}, ${t.tenant_id}, ${t.trace_service_id}, ${t.trace_id}, now(), ${a.costUsd}, ${tx.json(a.metrics as any)})
    on conflict (trace_pk) do update set computed_at = excluded.computed_at, cost_usd = excluded.cost_usd, metrics = excluded.metrics`;
}
