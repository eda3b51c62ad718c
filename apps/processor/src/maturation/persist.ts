import type postgres from "postgres";
import type { IntentMatch, ToolSchemaSeen } from "../analysis/catalog.ts";
import type { SessionAnalysis, TraceAnalysis } from "../analysis/session.ts";
import { storedTraceMetrics, type TraceMetricsBaseFields } from "@cellar/shared/db/trace-metrics";
import { persistFindings } from "./persist-findings.ts";
import type { SessionRow, TraceRow } from "./store.ts";

export { persistTranscriptItems, TranscriptItemWriter } from "./persist-transcript.ts";

/** The analysis of one session as persisted: everything but the items (written as soon as computed). */
export type SessionSummary = Omit<SessionAnalysis, "items"> & { keptItems: number };

export interface Materialization {
  row: SessionRow;
  analysis: SessionSummary;
  /** `sessions.activity_seq` / `last_ingested_at` the analysis read (under the row lock). */
  throughActivitySeq: number;
  throughIngestedAt: Date;
  /** An earlier materialization exists and is replaced. */
  replace: boolean;
}

/**
 * A metrics key as its typed column (migration 0009): the number when the key holds a number,
 * else null, read from the same jsonb so it is exactly what a `metrics.<key>` filter reads there.
 */
const metricColumn = (tx: postgres.TransactionSql, key: string) =>
  tx`case when jsonb_typeof(x.metrics -> ${key}::text) = 'number' then (x.metrics ->> ${key}::text)::float8 end`;

/** Replaces the materialization of a batch of sessions: multi-row statements, not per session. */
export async function persistSessionAnalyses(tx: postgres.TransactionSql, list: Materialization[]): Promise<void> {
  if (list.length === 0) return;
  const clampInt = (n: number) => Math.min(Math.max(0, Math.round(n)), 2_147_483_647);
  const rows = list.map((m0) => {
    const { row: s, analysis: a } = m0;
    const m = a.metrics;
    return {
      session_pk: s.id,
      tenant_id: s.tenant_id,
      trace_service_id: s.trace_service_id,
      session_id: s.session_id,
      maturation_count: s.maturation_count,
      through_ingested_at: m0.throughIngestedAt.toISOString(),
      through_activity_seq: m0.throughActivitySeq,
      item_count: a.keptItems,
      truncated: a.truncated,
      duration_ms: clampInt(m.durationMs),
      turns: m.turns,
      model_calls: m.modelCalls,
      tool_calls: m.toolCalls,
      total_tokens: clampInt(m.totalTokens),
      errors: m.errors,
      problems: m.problems,
      cost_usd: m.costUsd,
      metrics: m,
      cost_by_model: a.costByModel,
      tool_costs: a.toolCosts,
      tldr: a.tldr,
    };
  });
  await tx`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at,
      through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd,
      latency_p50_ms, latency_p95_ms, latency_max_ms, metrics, cost_by_model, tool_costs, tldr, tldr_source)
    select session_pk, tenant_id, trace_service_id, session_id, maturation_count, now(), through_ingested_at,
      through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd,
      ${metricColumn(tx, "latencyP50Ms")}, ${metricColumn(tx, "latencyP95Ms")}, ${metricColumn(tx, "latencyMaxMs")}, metrics, cost_by_model, tool_costs, tldr, 'extractive'
    from json_to_recordset(${tx.json(rows as any)}::json) as x(session_pk uuid, tenant_id uuid, trace_service_id uuid, session_id text,
      maturation_count int, through_ingested_at timestamptz, through_activity_seq bigint, item_count int, truncated boolean, duration_ms int,
      turns int, model_calls int, tool_calls int, total_tokens int, errors int, problems int, cost_usd float8, metrics jsonb, cost_by_model jsonb,
      tool_costs jsonb, tldr text)
    order by session_pk
    on conflict (session_pk, tenant_id) do update set maturation_count = excluded.maturation_count, computed_at = excluded.computed_at,
      through_ingested_at = excluded.through_ingested_at, through_activity_seq = excluded.through_activity_seq, item_count = excluded.item_count,
      truncated = excluded.truncated, duration_ms = excluded.duration_ms, turns = excluded.turns, model_calls = excluded.model_calls,
      tool_calls = excluded.tool_calls, total_tokens = excluded.total_tokens, errors = excluded.errors, problems = excluded.problems,
      cost_usd = excluded.cost_usd, latency_p50_ms = excluded.latency_p50_ms, latency_p95_ms = excluded.latency_p95_ms,
      latency_max_ms = excluded.latency_max_ms, metrics = excluded.metrics, cost_by_model = excluded.cost_by_model, tool_costs = excluded.tool_costs,
      tldr = excluded.tldr, tldr_source = excluded.tldr_source`;
  await persistToolSchemas(
    tx,
    list.map((m) => ({ row: m.row, schemas: m.analysis.toolSchemas, replace: m.replace })),
  );
  await persistIntents(
    tx,
    list.map((m) => ({ row: m.row, matches: m.analysis.intents, replace: m.replace })),
  );
  // Last: issue rows are shared by every session with the same problem; lock them as late as possible.
  await persistFindings(
    tx,
    list.map((m) => ({ row: m.row, findings: m.analysis.findings, replace: m.replace })),
  );
}

/**
 * Upserts the tool schemas of a batch of sessions (first/last seen widened) and relinks each
 * session to what it used. Rows go in sorted, so concurrent maturations lock shared schema rows
 * in the same order (no deadlock).
 */
export async function persistToolSchemas(
  tx: postgres.TransactionSql,
  list: Array<{ row: SessionRow; schemas: ToolSchemaSeen[]; replace: boolean }>,
): Promise<void> {
  const replaced = list.filter((x) => x.replace).map((x) => x.row.id);
  if (replaced.length) await tx`delete from session_tool_schemas where session_pk = any(${tx.array(replaced)}::uuid[])`;
  const merged = new Map<
    string,
    {
      tenant_id: string;
      trace_service_id: string;
      name: string;
      schema_hash: string;
      schema: unknown;
      first: string;
      last: string;
    }
  >();
  for (const { row, schemas } of list) {
    for (const x of schemas) {
      const key = `${row.trace_service_id}\u0000${x.name}\u0000${x.schemaHash}`;
      const m = merged.get(key);
      if (!m)
        merged.set(key, {
          tenant_id: row.tenant_id,
          trace_service_id: row.trace_service_id,
          name: x.name,
          schema_hash: x.schemaHash,
          schema: x.schema,
          first: x.firstSeenAt,
          last: x.lastSeenAt,
        });
      else {
        if (x.firstSeenAt < m.first) m.first = x.firstSeenAt;
        if (x.lastSeenAt > m.last) m.last = x.lastSeenAt;
      }
    }
  }
  if (merged.size === 0) return;
  // Every maturation of a service sees the same few schemas: an upsert would lock the same rows
  // in every concurrent transaction and serialize them. Insert what is new, read the ids, and
  // widen first/last seen only when they move by more than a minute (rows a WHERE skips stay unlocked).
  const rows = [...merged.values()].sort(
    (a, b) =>
      a.trace_service_id.localeCompare(b.trace_service_id) ||
      a.name.localeCompare(b.name) ||
      a.schema_hash.localeCompare(b.schema_hash),
  );
  await tx`
    insert into tool_schemas (tenant_id, trace_service_id, name, schema_hash, schema, first_seen_at, last_seen_at)
    select tenant_id, trace_service_id, name, schema_hash, schema, first, last
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, name text, schema_hash text, schema jsonb, first timestamptz, last timestamptz)
    order by trace_service_id, name, schema_hash
    on conflict (trace_service_id, name, schema_hash, tenant_id) do nothing`;
  const keys = rows.map((r) => ({
    trace_service_id: r.trace_service_id,
    name: r.name,
    schema_hash: r.schema_hash,
    first: r.first,
    last: r.last,
  }));
  const saved = await tx<{ id: string; trace_service_id: string; name: string; schema_hash: string; stale: boolean }[]>`
    select t.id, t.trace_service_id, t.name, t.schema_hash,
      (t.last_seen_at < x.last - interval '1 minute' or t.first_seen_at > x.first + interval '1 minute') as stale
    from tool_schemas t join jsonb_to_recordset(${tx.json(keys as any)}::jsonb) as x(trace_service_id uuid, name text, schema_hash text, first timestamptz, last timestamptz)
      on t.trace_service_id = x.trace_service_id and t.name = x.name and t.schema_hash = x.schema_hash`;
  const stale = saved
    .filter((r) => r.stale)
    .map((r) => r.id)
    .sort();
  if (stale.length) {
    await tx`
      with x as (select * from jsonb_to_recordset(${tx.json(keys as any)}::jsonb) as x(trace_service_id uuid, name text, schema_hash text, first timestamptz, last timestamptz)),
        locked as (select id from tool_schemas where id = any(${tx.array(stale)}::uuid[]) order by id for update)
      update tool_schemas t set first_seen_at = least(t.first_seen_at, x.first), last_seen_at = greatest(t.last_seen_at, x.last)
      from x where t.id in (select id from locked) and t.trace_service_id = x.trace_service_id and t.name = x.name and t.schema_hash = x.schema_hash`;
  }
  const idOf = new Map(saved.map((r) => [`${r.trace_service_id}\u0000${r.name}\u0000${r.schema_hash}`, r.id]));
  const links = list.flatMap(({ row, schemas }) =>
    schemas.map((x) => ({
      session_pk: row.id,
      tenant_id: row.tenant_id,
      tool_schema_id: idOf.get(`${row.trace_service_id}\u0000${x.name}\u0000${x.schemaHash}`),
    })),
  );
  if (links.length) {
    await tx`
      insert into session_tool_schemas (session_pk, tenant_id, tool_schema_id)
      select session_pk, tenant_id, tool_schema_id from jsonb_to_recordset(${tx.json(links as any)}::jsonb) as x(session_pk uuid, tenant_id uuid, tool_schema_id uuid)
      on conflict do nothing`;
  }
}

export async function persistIntents(
  tx: postgres.TransactionSql,
  list: Array<{ row: SessionRow; matches: IntentMatch[]; replace: boolean }>,
): Promise<void> {
  const replaced = list.filter((x) => x.replace).map((x) => x.row.id);
  if (replaced.length) await tx`delete from session_intents where session_pk = any(${tx.array(replaced)}::uuid[])`;
  const rows = list.flatMap(({ row, matches }) =>
    matches.map((m) => ({
      session_pk: row.id,
      tenant_id: row.tenant_id,
      intent_id: m.intentId,
      score: m.score,
      evidence: m.evidence,
    })),
  );
  if (rows.length === 0) return;
  await tx`
    insert into session_intents (session_pk, intent_id, tenant_id, score, evidence)
    select session_pk, intent_id, tenant_id, score, evidence
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(session_pk uuid, intent_id uuid, tenant_id uuid, score real, evidence jsonb)
    on conflict do nothing`;
}

/**
 * A trace's analysis, written once at its maturation: `computed_at` is its maturation time
 * (shared/maturation/state.ts, TRACE_MATURED_AT_SQL), never rewritten. Metrics in full: the
 * writer before claimedTraceAnalyses, for the upgrade tests.
 */
export async function persistTraceAnalyses(
  tx: postgres.TransactionSql,
  list: Array<{ row: TraceRow; analysis: TraceAnalysis }>,
): Promise<void> {
  if (list.length === 0) return;
  const rows = list.map(({ row: t, analysis: a }) => ({
    trace_pk: t.id,
    tenant_id: t.tenant_id,
    trace_service_id: t.trace_service_id,
    trace_id: t.trace_id,
    cost_usd: a.costUsd,
    metrics: a.metrics,
  }));
  // In full, as the writer stored them before it computed deltas itself (claimedTraceAnalyses):
  // the shape of every row written before, for the upgrade tests.
  await tx`
    insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics, metrics_delta)
    select x.trace_pk, x.tenant_id, x.trace_service_id, x.trace_id, now(), x.cost_usd, x.metrics, null
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(trace_pk uuid, tenant_id uuid, trace_service_id uuid, trace_id text, cost_usd float8, metrics jsonb)
    order by x.trace_pk
    on conflict (trace_pk, tenant_id) do nothing`;
}

/**
 * The analyses of traces being claimed by the same statement (maturationState.matureTraces'
 * `withClaimed`): joined to its CTE `m`, so only the traces it claimed get a row, with their
 * maturation time as `computed_at`. Metrics as what differs from the trace row's base
 * (storedTraceMetrics, migration 0021's compact shape: about 1 KB less per trace), the trace
 * row's base fields read with the payload (loadTracesForMetrics).
 */
export function claimedTraceAnalyses(
  tx: postgres.Sql | postgres.TransactionSql,
  list: Array<{
    row: { id: string; tenant_id: string; trace_service_id: string; trace_id: string };
    base: TraceMetricsBaseFields;
    analysis: TraceAnalysis;
  }>,
): postgres.PendingQuery<postgres.Row[]> {
  // The trace's columns come from the row read with its payload (never updated): the statement
  // reads no trace row but the foreign key's, which also holds the tenant to the trace's.
  const rows = list.map(({ row, base, analysis: a }) => {
    const stored = storedTraceMetrics(a.metrics, a.costUsd, base);
    return {
      trace_pk: row.id,
      tenant_id: row.tenant_id,
      trace_service_id: row.trace_service_id,
      trace_id: row.trace_id,
      cost_usd: a.costUsd,
      metrics: stored.metrics,
      metrics_delta: stored.delta,
    };
  });
  return tx`
    insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics, metrics_delta)
    select x.trace_pk, x.tenant_id, x.trace_service_id, x.trace_id, m.matured_at, x.cost_usd, x.metrics, x.metrics_delta
    from json_to_recordset(${tx.json(rows as any)}::json)
        as x(trace_pk uuid, tenant_id uuid, trace_service_id uuid, trace_id text, cost_usd float8, metrics jsonb, metrics_delta jsonb)
      join m on m.trace_pk = x.trace_pk
    order by x.trace_pk
    on conflict (trace_pk, tenant_id) do nothing`;
}
