import type postgres from "postgres";
import type { MaturedMessage } from "@cellar/shared/payloads";
import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import { addTo, emptyHistogram } from "@cellar/shared/rollups/histogram";

/**
 * The overview's rollups (docs/dashboard.md, Overview): what each matured session adds to
 * per-service, per-environment, per-model buckets (BUCKET_SECONDS). A session's numbers
 * count at its first activity. Kept by the `processor-rollups` consumer of MATURED; the
 * maturation code itself is untouched (it owns the analyses these read).
 *
 * Idempotent by recomputing: each session's last applied contribution is stored with the
 * maturation it came from (`overview_session_parts`). A redelivered or replayed message finds
 * the session's current maturation already applied and changes nothing; a later maturation
 * subtracts the old contribution and adds the new one, in one transaction under the session's
 * advisory lock.
 */
/** 5 minutes (the 1 h window), 1 hour (24 h), 6 hours (7 d), 1 day (30 d): a window reads 12 to 30 rows per environment and model. */
export const BUCKET_SECONDS = [300, 3600, 21_600, 86_400] as const;

export interface RollupPart {
  environment: string;
  bucket_seconds: number;
  bucket_start: string;
  model: string;
  sessions: number;
  error_sessions: number;
  problem_sessions: number;
  traces: number;
  cost_usd: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Model calls the price book could not price (issue 40; absent in parts stored before it: 0). */
  unpriced_calls: number;
  latency_hist: number[];
}

interface SessionSource {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  environment: string | null;
  first_activity_at: Date;
  maturation_count: number;
  matured_at: Date | null;
  errors: number;
  problems: number;
  cost_by_model: Array<{
    model: string;
    calls: number;
    promptTokens: number;
    completionTokens: number;
    costUsd: number | null;
    /** Absent in analyses from before unpriced calls were counted (read as 0). */
    unpricedCalls?: number;
  }>;
}

/**
 * The cost table's model a trace's model belongs to: equal, or the longest `<name>-` prefix (dated
 * versions). Failing that, the one cost model that is the trace's model with a dated suffix: an
 * unpriced call's cost row keeps the response's model (`acme-llm-2024-07-18`) where the trace has
 * the request's (`acme-llm`), and its calls and its unpriced count belong on one row.
 */
export function costModelOf(traceModel: string, costModels: string[]): string {
  let best = "";
  for (const m of costModels)
    if ((traceModel === m || traceModel.startsWith(`${m}-`)) && m.length > best.length) best = m;
  if (best) return best;
  const dated = costModels.filter((m) => m.startsWith(`${traceModel}-`) && /^\d/.test(m.slice(traceModel.length + 1)));
  return dated.length === 1 ? dated[0] : traceModel;
}

type PartRow = Omit<RollupPart, "bucket_seconds" | "bucket_start" | "environment">;

/**
 * What `overview_session_parts.parts` keeps of a session's contribution: its rows once (not once
 * per bucket size) with sparse histograms (`hist`: bucket index, count, index, count, ...), and
 * what places them in buckets (its environment, its first activity). About 460 bytes of JSON
 * where the expanded parts were about 3,500: inserting them cost Postgres 180 us per session
 * (compressed on the way in), the compact form 19 (docs/performance.md, "Session maturations
 * batched on MATURED"). Rows written before are the expanded parts themselves (an array), and
 * still read as such (expandParts).
 */
export interface StoredParts {
  environment: string;
  at: string;
  rows: Array<Omit<PartRow, "latency_hist"> & { hist: number[] }>;
}

/** One session's contribution: a session row (model '') with totals, and one row per model. */
export function sessionParts(s: SessionSource, traces: Array<{ model: string | null; ms: number }>): RollupPart[] {
  return expandParts(storedParts(s, traces));
}

/** The stored form of a session's contribution (StoredParts). */
export function storedParts(s: SessionSource, traces: Array<{ model: string | null; ms: number }>): StoredParts {
  const environment = s.environment ?? "";
  const costModels = s.cost_by_model.map((c) => c.model);
  const total = emptyHistogram();
  const byModel = new Map<string, number[]>();
  for (const t of traces) {
    const model = costModelOf(t.model ?? "unknown", costModels);
    addTo(total, t.ms);
    if (!byModel.has(model)) byModel.set(model, emptyHistogram());
    addTo(byModel.get(model)!, t.ms);
  }
  const sum = (f: (c: SessionSource["cost_by_model"][number]) => number) =>
    s.cost_by_model.reduce((a, c) => a + (f(c) || 0), 0);
  const rows: PartRow[] = [
    {
      model: "",
      sessions: 1,
      error_sessions: s.errors > 0 ? 1 : 0,
      problem_sessions: s.problems > 0 ? 1 : 0,
      traces: traces.length,
      cost_usd: sum((c) => c.costUsd ?? 0),
      prompt_tokens: sum((c) => c.promptTokens),
      completion_tokens: sum((c) => c.completionTokens),
      unpriced_calls: sum((c) => c.unpricedCalls ?? 0),
      latency_hist: total,
    },
  ];
  for (const model of new Set([...costModels, ...byModel.keys()])) {
    const c = s.cost_by_model.find((x) => x.model === model);
    const hist = byModel.get(model) ?? emptyHistogram();
    rows.push({
      model,
      sessions: 0,
      error_sessions: 0,
      problem_sessions: 0,
      traces: hist.reduce((a, b) => a + b, 0),
      cost_usd: c?.costUsd ?? 0,
      prompt_tokens: c?.promptTokens ?? 0,
      completion_tokens: c?.completionTokens ?? 0,
      unpriced_calls: c?.unpricedCalls ?? 0,
      latency_hist: hist,
    });
  }
  return {
    environment,
    at: s.first_activity_at.toISOString(),
    rows: rows.map(({ latency_hist, ...r }) => ({ ...r, hist: latency_hist.flatMap((n, i) => (n ? [i, n] : [])) })),
  };
}

/** A stored contribution as the rollup rows it adds to, one per bucket size; the old expanded form as it is. */
export function expandParts(stored: StoredParts | RollupPart[]): RollupPart[] {
  if (Array.isArray(stored)) return stored;
  const at = Date.parse(stored.at);
  const rows = stored.rows.map(({ hist, ...r }) => {
    const latency_hist = emptyHistogram();
    for (let i = 0; i < hist.length; i += 2) latency_hist[hist[i]] = hist[i + 1];
    return { ...r, latency_hist };
  });
  return BUCKET_SECONDS.flatMap((seconds) => {
    const bucket_start = new Date(at - (at % (seconds * 1000))).toISOString();
    return rows.map((r) => ({
      environment: stored.environment,
      bucket_seconds: seconds,
      bucket_start,
      ...r,
      latency_hist: [...r.latency_hist],
    }));
  });
}

const negate = (p: RollupPart): RollupPart => ({
  ...p,
  sessions: -p.sessions,
  error_sessions: -p.error_sessions,
  problem_sessions: -p.problem_sessions,
  traces: -p.traces,
  cost_usd: -p.cost_usd,
  prompt_tokens: -p.prompt_tokens,
  completion_tokens: -p.completion_tokens,
  unpriced_calls: -(p.unpriced_calls ?? 0),
  latency_hist: p.latency_hist.map((n) => -n),
});

/** Adds parts to the rollup rows, in key order (two sessions' transactions never wait on each other in a cycle). */
async function addParts(
  tx: postgres.TransactionSql,
  s: { tenant_id: string; trace_service_id: string },
  parts: RollupPart[],
) {
  if (!parts.length) return;
  await tx`
    insert into overview_rollups as r (tenant_id, trace_service_id, environment, bucket_seconds, bucket_start, model,
      sessions, error_sessions, problem_sessions, traces, cost_usd, prompt_tokens, completion_tokens, unpriced_calls, latency_hist)
    select ${s.tenant_id}, ${s.trace_service_id}, environment, bucket_seconds, bucket_start, model,
      sessions, error_sessions, problem_sessions, traces, cost_usd, prompt_tokens, completion_tokens, coalesce(unpriced_calls, 0), latency_hist
    from jsonb_to_recordset(${tx.json(parts as any)}::jsonb) as x(environment text, bucket_seconds int, bucket_start timestamptz,
      model text, sessions int, error_sessions int, problem_sessions int, traces int, cost_usd float8, prompt_tokens bigint,
      completion_tokens bigint, unpriced_calls int, latency_hist int[])
    order by bucket_seconds, bucket_start, environment, model
    on conflict (trace_service_id, bucket_seconds, bucket_start, environment, model, tenant_id) do update set
      sessions = r.sessions + excluded.sessions,
      error_sessions = r.error_sessions + excluded.error_sessions,
      problem_sessions = r.problem_sessions + excluded.problem_sessions,
      traces = r.traces + excluded.traces,
      cost_usd = r.cost_usd + excluded.cost_usd,
      prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = r.completion_tokens + excluded.completion_tokens,
      unpriced_calls = r.unpriced_calls + excluded.unpriced_calls,
      latency_hist = (select array_agg(a + b order by i)
        from unnest(r.latency_hist, excluded.latency_hist) with ordinality as u(a, b, i))`;
}

export type RollupResult = "applied" | "already applied" | "not analysed";

/** Brings the rollups up to date with one session's current maturation (see the module comment). */
export async function applySessionRollup(sql: postgres.Sql, sessionPk: string): Promise<RollupResult> {
  return (await applySessionRollups(sql, [sessionPk])).get(sessionPk)!;
}

/** The sum of parts by rollup key (one upsert per key, not per session). */
function mergeParts(parts: RollupPart[]): RollupPart[] {
  const byKey = new Map<string, RollupPart>();
  for (const p of parts) {
    const key = `${p.bucket_seconds}\u0000${p.bucket_start}\u0000${p.environment}\u0000${p.model}`;
    const m = byKey.get(key);
    if (!m) {
      byKey.set(key, { ...p, unpriced_calls: p.unpriced_calls ?? 0, latency_hist: [...p.latency_hist] });
      continue;
    }
    m.sessions += p.sessions;
    m.error_sessions += p.error_sessions;
    m.problem_sessions += p.problem_sessions;
    m.traces += p.traces;
    m.cost_usd += p.cost_usd;
    m.prompt_tokens += p.prompt_tokens;
    m.completion_tokens += p.completion_tokens;
    m.unpriced_calls += p.unpriced_calls ?? 0;
    p.latency_hist.forEach((n, i) => {
      m.latency_hist[i] += n;
    });
  }
  return [...byKey.values()];
}

/**
 * The same for many sessions in one transaction: their locks taken in one order, their traces
 * read in one statement, and their contributions summed per rollup row before one upsert per
 * service (a backfill of 600,000 sessions into the same few rows otherwise queues every
 * transaction on the same row locks). Same result as applying them one by one.
 */
export async function applySessionRollups(sql: postgres.Sql, sessionPks: string[]): Promise<Map<string, RollupResult>> {
  const result = new Map<string, RollupResult>(sessionPks.map((pk) => [pk, "not analysed"]));
  if (!sessionPks.length) return result;
  await sql.begin(async (tx) => {
    // Sorted inside the subquery (offset 0 keeps it from being flattened), so two batches take
    // shared session locks in the same order; rollup rows are then upserted in key order.
    await tx`
      select count(pg_advisory_xact_lock(k)) from (
        select distinct hashtextextended(id::text, 25) as k from unnest(${tx.array(sessionPks)}::uuid[]) id order by k offset 0) l`;
    const sessions = await tx<SessionSource[]>`
      select s.id, s.tenant_id, s.trace_service_id, s.environment, s.first_activity_at, s.maturation_count, s.matured_at,
        sa.errors, sa.problems, sa.cost_by_model
      from sessions s join session_analyses sa on sa.session_pk = s.id
      where s.id = any(${tx.array(sessionPks)}::uuid[]) and s.matured_at is not null`;
    if (!sessions.length) return;
    const ids = sessions.map((s) => s.id);
    const old = new Map(
      (
        await tx<
          { session_pk: string; maturation_count: number; matured_at: Date; parts: StoredParts | RollupPart[] }[]
        >`
          select session_pk, maturation_count, matured_at, parts from overview_session_parts where session_pk = any(${tx.array(ids)}::uuid[])`
      ).map((o) => [o.session_pk, o]),
    );
    const due = sessions.filter((s) => {
      const o = old.get(s.id);
      const current =
        o && o.maturation_count === s.maturation_count && o.matured_at.getTime() === s.matured_at!.getTime();
      if (current) result.set(s.id, "already applied");
      return !current;
    });
    if (!due.length) return;
    const tracesOf = new Map<string, Array<{ model: string | null; ms: number }>>();
    for (const t of await tx<{ session_pk: string; model: string | null; ms: number }[]>`
      select session_pk, model, extract(epoch from end_time - start_time) * 1000 as ms
      from traces where session_pk = any(${tx.array(due.map((s) => s.id))}::uuid[])`) {
      if (!tracesOf.has(t.session_pk)) tracesOf.set(t.session_pk, []);
      tracesOf.get(t.session_pk)!.push({ model: t.model, ms: Number(t.ms) });
    }
    const byService = new Map<string, { s: SessionSource; parts: RollupPart[] }>();
    const written: Array<{
      session_pk: string;
      tenant_id: string;
      trace_service_id: string;
      maturation_count: number;
      matured_at: Date;
      parts: StoredParts;
    }> = [];
    for (const s of due) {
      const parts = storedParts(s, tracesOf.get(s.id) ?? []);
      const group = byService.get(s.trace_service_id) ?? { s, parts: [] };
      byService.set(s.trace_service_id, group);
      const o = old.get(s.id);
      if (o) group.parts.push(...expandParts(o.parts).map(negate));
      group.parts.push(...expandParts(parts));
      written.push({
        session_pk: s.id,
        tenant_id: s.tenant_id,
        trace_service_id: s.trace_service_id,
        maturation_count: s.maturation_count,
        matured_at: s.matured_at!,
        parts,
      });
      result.set(s.id, "applied");
    }
    for (const { s, parts } of [...byService.values()].sort((a, b) =>
      a.s.trace_service_id.localeCompare(b.s.trace_service_id),
    ))
      await addParts(tx, s, mergeParts(parts));
    await tx`
      insert into overview_session_parts (session_pk, tenant_id, trace_service_id, maturation_count, matured_at, parts)
      select session_pk, tenant_id, trace_service_id, maturation_count, matured_at, parts
      from jsonb_to_recordset(${tx.json(written as any)}::jsonb) as x(session_pk uuid, tenant_id uuid, trace_service_id uuid, maturation_count int, matured_at timestamptz, parts jsonb)
      order by session_pk
      on conflict (session_pk, tenant_id) do update set maturation_count = excluded.maturation_count,
        matured_at = excluded.matured_at, parts = excluded.parts`;
  });
  return result;
}

/**
 * Sessions applied in one transaction by the consumer: a batch of 200 messages can carry 20,000
 * session maturations since sessions travel in batches (docs/maturation.md), and one transaction
 * of them all would read 200,000 trace rows and write megabytes in one statement.
 */
export const ROLLUP_SESSIONS_PER_TRANSACTION = 1_000;

/**
 * The consumer's handler: session maturations only (the catalogue's filter), a batch at a time
 * in transactions of up to ROLLUP_SESSIONS_PER_TRANSACTION sessions (applySessionRollups), acked
 * once all are applied (a failure retries the batch: what was applied is found applied). Every
 * session of a service adds to the same few rollup rows: one transaction per message, several at
 * once, queued on those rows' locks (13.5 ms per upsert at 300 traces/s, docs/performance.md).
 */
export function rollupHandler(sql: postgres.Sql) {
  return async (items: Delivery<MaturedMessage[] | null>[]): Promise<Outcome[]> => {
    // Each message: a session maturation, or a batch of them (the codec keeps only sessions).
    const pks = [...new Set(items.flatMap((d) => (d.value ?? []).map((m) => m.entityPk)))];
    for (let i = 0; i < pks.length; i += ROLLUP_SESSIONS_PER_TRANSACTION)
      await applySessionRollups(sql, pks.slice(i, i + ROLLUP_SESSIONS_PER_TRANSACTION));
    return items.map(() => "ack");
  };
}

/**
 * Rolls up every analysed session whose current maturation is not applied yet: after an
 * upgrade (sessions matured before the rollups existed), or to rebuild. Keyset over session ids,
 * `batch` at a time, split into `concurrency` transactions of applySessionRollups; returns how
 * many were applied.
 */
export async function backfillRollups(
  sql: postgres.Sql,
  opts: { batch?: number; concurrency?: number; onProgress?: (done: number) => void } = {},
): Promise<number> {
  const batch = opts.batch ?? 1000;
  const lanes = Math.max(1, opts.concurrency ?? 4);
  let after = "00000000-0000-0000-0000-000000000000";
  let applied = 0;
  for (;;) {
    const rows = await sql<{ id: string }[]>`
      select sa.session_pk as id from session_analyses sa
      left join overview_session_parts p on p.session_pk = sa.session_pk and p.maturation_count = sa.maturation_count
      where sa.session_pk > ${after} and p.session_pk is null
      order by sa.session_pk limit ${batch}`;
    if (!rows.length) return applied;
    after = rows[rows.length - 1].id;
    const per = Math.ceil(rows.length / lanes);
    const results = await Promise.all(
      Array.from({ length: lanes }, (_, i) =>
        applySessionRollups(
          sql,
          rows.slice(i * per, (i + 1) * per).map((r) => r.id),
        ),
      ),
    );
    for (const r of results) for (const v of r.values()) if (v === "applied") applied++;
    opts.onProgress?.(applied);
  }
}
