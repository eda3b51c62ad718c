import type postgres from "postgres";
import { itemRowsSql } from "../analysis/transcript-rows.ts";
import { itemFromRow, toolCallsOf, type StoredItemRow } from "../analysis/transcript-source.ts";
import { decodePayload } from "../db/payload-codec.ts";
import {
  contentText,
  cut,
  LEAN_TOOL_CHARS,
  LEAN_TOTAL_CHARS,
  type EvalContext,
  type EvalFinding,
  type EvalItem,
  type EvalToolCall,
} from "./context.ts";

/** Transcript items read per session (a longer session is judged on its first ones, and marked truncated). */
export const MAX_ITEMS = 2_000;

/**
 * What an evaluator judges of a matured session (docs/evaluations.md): its stored transcript in
 * lean form (content put back from the traces' payloads, as the platform's transcript read does),
 * its metrics and findings, its scores' means and the requests' metadata. Null when the session
 * is gone (deleted, retention) or has no transcript yet.
 */
export async function loadSessionContext(
  sql: postgres.Sql,
  tenantId: string,
  sessionPk: string,
): Promise<EvalContext | null> {
  const [s] = await sql`
    select s.session_id, s.environment, s.trace_service_id, a.metrics, a.cost_by_model, a.turns, a.model_calls, a.tool_calls,
      a.total_tokens, a.errors, a.problems, a.cost_usd, a.duration_ms, a.item_count
    from sessions s join session_analyses a on a.session_pk = s.id and a.tenant_id = s.tenant_id
    where s.id = ${sessionPk} and s.tenant_id = ${tenantId}`;
  if (!s) return null;
  // Either stored shape (shared/analysis/transcript-rows.ts), in position order.
  const rows = await sql.unsafe<Array<StoredItemRow & { source_trace_pk: string | null }>>(
    `select item_id, kind, role, timestamp, trace_id, span_id, item, source, source_trace_pk
     from (${itemRowsSql({ session: "$1::uuid", tenant: "$2::uuid", limit: "$3" })}) ti order by position limit $3`,
    [sessionPk, tenantId, MAX_ITEMS],
  );
  const pks = [...new Set(rows.map((r) => r.source_trace_pk).filter((pk): pk is string => pk !== null))];
  const traces = pks.length
    ? await sql`
        select tr.id, tr.tenant_id, tr.model, tr.payload,
          (select z.payload_z from trace_payloads z where z.tenant_id = tr.tenant_id and z.trace_pk = tr.id) as payload_z
        from traces tr where tr.id = any(${pks}::uuid[]) and tr.tenant_id = ${tenantId}`
    : [];
  const payloads = new Map<string, any>();
  const metadata: Record<string, string> = {};
  for (const t of traces) {
    const payload = decodePayload(t as { payload?: unknown; payload_z?: Uint8Array | null });
    payloads.set(t.id, payload);
    Object.assign(metadata, stringMetadata(payload?.request?.metadata), stringMetadata(payload?.metadata));
  }
  const full = rows.map((r) => itemFromRow(r, r.source_trace_pk ? payloads.get(r.source_trace_pk) : undefined, true));
  const findings = await sql`
    select f.detector, f.severity, f.title, f.evidence from findings f
    where f.session_pk = ${sessionPk} and f.tenant_id = ${tenantId} order by f.occurred_at limit 200`;
  const scores = await sql`
    select name, avg(value)::float8 as mean from scores
    where trace_service_id = ${s.trace_service_id} and session_id = ${s.session_id} and value is not null group by name`;
  const models = [
    ...new Set(
      (Array.isArray(s.cost_by_model) ? s.cost_by_model : [])
        .map((m: any) => m?.model)
        .filter((m: unknown): m is string => typeof m === "string"),
    ),
  ];
  for (const t of traces) if (t.model && !models.includes(t.model)) models.push(t.model);
  const metrics = {
    ...(s.metrics ?? {}),
    turns: s.turns,
    modelCalls: s.model_calls,
    toolCalls: s.tool_calls,
    totalTokens: s.total_tokens,
    errors: s.errors,
    problems: s.problems,
    costUsd: s.cost_usd,
    durationMs: s.duration_ms,
  };
  return build({
    target: "session",
    entityId: s.session_id,
    environment: s.environment ?? null,
    models,
    full,
    metrics,
    findings: findings.map(findingOf),
    metadata,
    scoreMeans: Object.fromEntries(scores.map((r) => [r.name, Number(r.mean)])),
    truncated: Number(s.item_count ?? 0) > rows.length,
  });
}

/**
 * What an evaluator's filter reads of a session but its requests' metadata, in one small query
 * (no transcript, no payload): the runner checks filters on it first, so an evaluator whose
 * filter matches nothing costs this query, not a transcript load.
 */
export async function loadSessionFacts(
  sql: postgres.Sql,
  tenantId: string,
  sessionPk: string,
): Promise<Pick<EvalContext, "environment" | "models" | "findings" | "scoreMeans"> | null> {
  const [s] = await sql`
    select s.environment,
      (select coalesce(jsonb_agg(distinct m ->> 'model'), '[]'::jsonb) from jsonb_array_elements(a.cost_by_model) m) as models,
      (select count(*)::int from findings f where f.session_pk = s.id and f.tenant_id = s.tenant_id) as findings,
      (select coalesce(jsonb_object_agg(name, mean), '{}'::jsonb) from (
        select name, avg(value)::float8 as mean from scores sc
        where sc.trace_service_id = s.trace_service_id and sc.session_id = s.session_id and sc.value is not null group by name) x) as scores
    from sessions s join session_analyses a on a.session_pk = s.id and a.tenant_id = s.tenant_id
    where s.id = ${sessionPk} and s.tenant_id = ${tenantId}`;
  if (!s) return null;
  return {
    environment: s.environment ?? null,
    models: (s.models ?? []).filter((m: unknown): m is string => typeof m === "string"),
    // Only their number matters to a filter (has_findings).
    findings: Array.from({ length: s.findings }, () => ({
      detector: "",
      severity: "",
      title: "",
      inToolResult: false,
    })),
    scoreMeans: s.scores ?? {},
  };
}

/** A matured trace: its request's messages and its response, from the stored payload. */
export async function loadTraceContext(
  sql: postgres.Sql,
  tenantId: string,
  tracePk: string,
): Promise<EvalContext | null> {
  const [t] = await sql`
    select tr.id, tr.trace_id, tr.trace_service_id, tr.environment, tr.model, tr.payload, tr.total_tokens,
      (select z.payload_z from trace_payloads z where z.tenant_id = tr.tenant_id and z.trace_pk = tr.id) as payload_z,
      ta.cost_usd
    from traces tr left join trace_analyses ta on ta.trace_pk = tr.id and ta.tenant_id = tr.tenant_id
    where tr.id = ${tracePk} and tr.tenant_id = ${tenantId}`;
  if (!t) return null;
  const payload = decodePayload(t as { payload?: unknown; payload_z?: Uint8Array | null }) as any;
  const full: Record<string, unknown>[] = [];
  const messages: any[] = Array.isArray(payload?.request?.messages) ? payload.request.messages : [];
  const nameOfCall = new Map<string, string | null>();
  const push = (m: any) => {
    const calls = toolCallsOf(m);
    if (m?.role === "tool") {
      full.push({
        type: "tool_result",
        role: "tool",
        content: m.content,
        toolName: nameOfCall.get(m.tool_call_id) ?? null,
      });
      return;
    }
    if (m?.content !== null && m?.content !== undefined && m?.content !== "")
      full.push({
        type: m?.role === "assistant" ? "assistant" : m?.role === "user" ? "user" : "system",
        role: m?.role ?? null,
        content: m.content,
      });
    for (const c of calls) {
      if (c.id) nameOfCall.set(c.id, c.name);
      full.push({ type: "tool_call", role: "assistant", content: c.arguments, toolName: c.name, toolCallId: c.id });
    }
  };
  for (const m of messages) push(m);
  push(payload?.responses?.[0]?.choices?.[0]?.message);
  const scores = await sql`
    select name, avg(value)::float8 as mean from scores
    where trace_service_id = ${t.trace_service_id} and trace_id = ${t.trace_id} and value is not null group by name`;
  return build({
    target: "trace",
    entityId: t.trace_id,
    environment: t.environment ?? null,
    models: t.model ? [t.model] : [],
    full,
    metrics: { totalTokens: t.total_tokens === null ? null : Number(t.total_tokens), costUsd: t.cost_usd ?? null },
    findings: [],
    metadata: { ...stringMetadata(payload?.request?.metadata), ...stringMetadata(payload?.metadata) },
    scoreMeans: Object.fromEntries(scores.map((r) => [r.name, Number(r.mean)])),
    truncated: false,
  });
}

function stringMetadata(m: unknown): Record<string, string> {
  if (!m || typeof m !== "object" || Array.isArray(m)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m as Record<string, unknown>))
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[k] = String(v);
  return out;
}

function findingOf(r: postgres.Row): EvalFinding {
  return {
    detector: r.detector,
    severity: r.severity,
    title: r.title,
    inToolResult: r.detector === "prompt_injection",
  };
}

/** The lean items (tool content cut, the whole bounded) and the variables derived from them. */
function build(input: {
  target: "session" | "trace";
  entityId: string;
  environment: string | null;
  models: string[];
  full: Record<string, unknown>[];
  metrics: Record<string, unknown>;
  findings: EvalFinding[];
  metadata: Record<string, string>;
  scoreMeans: Record<string, number>;
  truncated: boolean;
}): EvalContext {
  const items: EvalItem[] = [];
  let total = 0;
  let truncated = input.truncated;
  const toolCalls: EvalToolCall[] = [];
  const callsById = new Map<string, EvalToolCall>();
  for (const f of input.full) {
    const type = String(f.type);
    if (type === "event") continue;
    const tool = type === "tool_call" || type === "tool_result";
    const text = contentText(f.content);
    const item: EvalItem = {
      type,
      role: (f.role as string | null) ?? null,
      content: tool ? cut(text, LEAN_TOOL_CHARS) : text,
      ...(tool ? { toolName: (f.toolName as string | null) ?? null } : {}),
    };
    if (type === "tool_call") {
      const call = { name: item.toolName ?? null, arguments: item.content, result: null as string | null };
      toolCalls.push(call);
      const id = (f.toolCallId ?? f.callId) as string | undefined;
      if (id) callsById.set(id, call);
    } else if (type === "tool_result") {
      const id = (f.toolCallId ?? f.callId) as string | undefined;
      const call =
        (id && callsById.get(id)) ||
        [...toolCalls].reverse().find((c) => c.result === null && c.name === item.toolName);
      if (call) call.result = item.content;
      else toolCalls.push({ name: item.toolName ?? null, arguments: "", result: item.content });
    }
    if (total + item.content.length > LEAN_TOTAL_CHARS) {
      truncated = true;
      break;
    }
    total += item.content.length;
    items.push(item);
  }
  const last = (pred: (i: EvalItem) => boolean) => [...items].reverse().find(pred)?.content ?? "";
  return {
    target: input.target,
    entityId: input.entityId,
    environment: input.environment,
    models: input.models,
    items,
    lastUserMessage: last((i) => i.type === "user"),
    finalAnswer: last((i) => i.type === "assistant"),
    toolCalls,
    metrics: input.metrics,
    findings: input.findings,
    metadata: input.metadata,
    scoreMeans: input.scoreMeans,
    truncated,
  };
}
