import type postgres from "postgres";
import type { IntentMatch, ToolSchemaSeen } from "../analysis/catalog.ts";
import type { SessionAnalysis, TraceAnalysis } from "../analysis/session.ts";
import { storedItem } from "@cellar/shared/analysis/transcript-source";
import { storedTraceMetrics, type TraceMetricsBaseFields } from "@cellar/shared/db/trace-metrics";
import { referenceOf, type TranscriptItem } from "../analysis/transcript.ts";
import { fnv1a64 } from "@cellar/shared/analysis/fnv";
import { persistFindings } from "./persist-findings.ts";
import type { SessionRow, TraceRow } from "./store.ts";

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

/** Rough JSON size of a transcript chunk: keeps one statement's parameter under a few MB. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Item rows of several sessions written together: a multi-row insert each time the buffer holds
 * 2,000 rows or CHUNK_BYTES (and once at the end), instead of one statement per session. Under
 * load every statement is a round trip of tens of ms, and a chunk of 50 small sessions paid 50 of
 * them (docs/performance.md, "Maturation throughput"). Memory stays bounded by the same budget.
 */
export class TranscriptItemWriter {
  private rows: string[] = [];
  private bytes = 0;
  constructor(private readonly tx: postgres.TransactionSql) {}

  async add(rows: StoredItemRow[]): Promise<void> {
    for (const row of rows) {
      this.rows.push(row.json);
      this.bytes += row.json.length;
      if (this.rows.length >= 2_000 || this.bytes >= CHUNK_BYTES) await this.flush();
    }
  }

  async flush(): Promise<void> {
    if (!this.rows.length) return;
    const part = `[${this.rows.join(",")}]`;
    this.rows = [];
    this.bytes = 0;
    const tx = this.tx;
    // json, not jsonb: the text is split into records once instead of built into one jsonb first;
    // and no ON CONFLICT: a session's rows are written only here, under its row lock, after its
    // old rows that changed were deleted (or none exist: a first maturation), with item ids made
    // unique in persistTranscriptItems. A conflict would be a bug, and failing the maturation says
    // so (recorded, retried, parked with its error) where DO NOTHING dropped the item unseen.
    // Postgres CPU per row 16 -> 12 us (the statement's speculative insertion and jsonb build).
    await tx`
      insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item, source_trace_pk, source, digest)
      select session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item, source_trace_pk, source, digest
      from json_to_recordset(${part}::text::json) as x(session_pk uuid, position int, tenant_id uuid, item_id text, kind text,
        role text, timestamp timestamptz, trace_id text, span_id text, item jsonb, source_trace_pk uuid, source text, digest int8)`;
  }
}

/**
 * Writes one session's transcript items: each row holds what maturation computed and, where its
 * content is in a stored payload, a reference to it instead of a copy (docs/analysis.md, "Items
 * as references"). A re-maturation keeps the rows whose (position, digest) are unchanged and
 * writes only the others. Called per session right after its analysis, so a chunk of sessions
 * never holds more than one session's items plus the shared `writer`'s bounded buffer in memory;
 * without a `writer` the rows are written before it returns.
 */
export async function persistTranscriptItems(
  tx: postgres.TransactionSql,
  s: SessionRow,
  items: TranscriptItem[],
  replace: boolean,
  writer?: TranscriptItemWriter,
): Promise<void> {
  const rows = items.map((item, position) => storedItemRow(s, item, position));
  let fresh = rows;
  let kept: StoredItemRow[] = [];
  if (replace) {
    const keptRows = await tx<{ position: number }[]>`
      with x as (select * from unnest(${tx.array(rows.map((r) => r.position))}::int[], ${tx.array(rows.map((r) => r.digest))}::int8[]) as x(position, digest)),
        gone as (
          delete from transcript_items t where t.session_pk = ${s.id}
            and not exists (select 1 from x where x.position = t.position and x.digest = t.digest))
      select t.position from transcript_items t join x on x.position = t.position and x.digest = t.digest where t.session_pk = ${s.id}`;
    const same = new Set(keptRows.map((r) => r.position));
    fresh = rows.filter((r) => !same.has(r.position));
    kept = rows.filter((r) => same.has(r.position));
  }
  // One row per item id in a session (the unique index of migration 0024): the first of the
  // session's items with an id is kept, a later one with the same id is left out, here.
  const ids = new Set(kept.map((r) => r.item_id));
  fresh = fresh.filter((r) => !ids.has(r.item_id) && ids.add(r.item_id));
  const out = writer ?? new TranscriptItemWriter(tx);
  await out.add(fresh);
  if (!writer) await out.flush();
}

interface StoredItemRow {
  position: number;
  item_id: string;
  /** Of everything the row stores but its position: an unchanged row is not written again. */
  digest: string;
  /** The whole row as the insert reads it (a JSON object), serialised once with its digest. */
  json: string;
}

function storedItemRow(s: SessionRow, item: TranscriptItem, position: number): StoredItemRow {
  const ref = referenceOf(item);
  const row = {
    item_id: item.id,
    kind: item.type,
    role: item.role,
    timestamp: item.timestamp,
    trace_id: item.traceId,
    span_id: item.spanId,
    item: storedItem(item, ref),
    source_trace_pk: ref?.tracePk ?? null,
    source: ref?.source ?? null,
  };
  // The text hashed is also the text written: one JSON.stringify per row (the insert's parameter
  // used to stringify it again).
  const body = JSON.stringify(row);
  const digest = rowDigest(body);
  const head = `{"session_pk":${JSON.stringify(s.id)},"position":${position},"tenant_id":${JSON.stringify(s.tenant_id)},"digest":"${digest}",`;
  return { position, item_id: item.id, digest, json: head + body.slice(1) };
}

/**
 * A row's digest: the top 60 bits of `stableId16(text)` (FNV-1a 64, stableId's first hash) as a
 * decimal int8, a signed int8 whatever the bits. The value `BigInt(0x + stableId16(text).slice(0,
 * 15))` gave, without its hex string and BigInt and with the integer-only hash (shared/analysis/fnv.ts):
 * 1.0-1.8 us per 250-byte row instead of 2.5 (persist.test.ts checks it equal on random text).
 */
export function rowDigest(text: string): string {
  const [hi, lo] = fnv1a64(text);
  return top60Decimal(hi, lo);
}

/** `((hi << 32 | lo) >> 4)` in decimal, for 32-bit unsigned halves. */
export function top60Decimal(hi: number, lo: number): string {
  // hi * 2^28 + (lo >>> 4) < 2^60 exceeds a double's 53 bits: split into decimal halves of 10
  // digits, each step exact (products under 2^53, remainders of integers exact).
  const low28 = lo >>> 4;
  const a1 = Math.floor(hi / 1e5);
  const a0 = hi - a1 * 1e5;
  const p = a1 * 268_435_456; // a1 * 2^28 < 2^44: times 1e5 is (p div 1e5) * 1e10 + (p mod 1e5) * 1e5
  const pr = p % 1e5;
  const q = a0 * 268_435_456; // < 2^45
  const qr = q % 1e10;
  let low = pr * 1e5 + qr + low28;
  let high = (p - pr) / 1e5 + (q - qr) / 1e10;
  const carry = Math.floor(low / 1e10);
  low -= carry * 1e10;
  high += carry;
  return high > 0 ? `${high}${String(low).padStart(10, "0")}` : String(low);
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
