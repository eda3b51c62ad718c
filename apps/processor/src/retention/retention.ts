import type postgres from "postgres";
import type { Logger } from "@cellar/shared/logger";
import { expireSessions, expireTraces } from "@cellar/shared/maturation/state";

export type Plan = "free" | "pro";
export type RetentionDefaults = Record<Plan, number>;

/** `RETENTION_DAYS`: one number for every plan, or `free=30,pro=90` (plans left out keep the default). */
export function parseRetentionDays(
  spec: string,
  fallback: RetentionDefaults = { free: 30, pro: 90 },
): RetentionDefaults {
  if (/^\d+$/.test(spec)) return { free: Number(spec), pro: Number(spec) };
  const out = { ...fallback };
  for (const part of spec.split(",")) {
    const [plan, days] = part.split("=");
    if ((plan === "free" || plan === "pro") && /^\d+$/.test(days ?? "")) out[plan] = Number(days);
    else throw new Error(`invalid RETENTION_DAYS part ${JSON.stringify(part)}: expected free=N or pro=N`);
  }
  for (const [plan, days] of Object.entries(out))
    if (days < 1) throw new Error(`invalid RETENTION_DAYS: ${plan} must keep at least 1 day`);
  return out;
}

export interface RetentionResult {
  tenants: number;
  sessions: number;
  traces: number;
  events: number;
  transcriptItems: number;
  issues: number;
  scores: number;
  monitorEvents: number;
  /** Longest single delete transaction (ms): what any lock was held for at most. */
  longestBatchMs: number;
}

/**
 * Removes telemetry older than each tenant's retention (docs/retention.md), in batches of
 * `batchSize` rows per short transaction (`for update skip locked`: never waits on a
 * maturation holding a row, and two processors running it at once split the work):
 *
 * Age is time since Cellar stored a row (ingestion time), not the payload's own timestamps: a
 * backfill of old telemetry is kept for the full period, and a client clock cannot expire data.
 *
 * 1. Sessions whose newest write is older than the cutoff go whole. Foreign keys cascade to
 *    their traces, spans, events, transcript items, analyses, findings, tool and intent links.
 * 2. A session created before the cutoff and still written to keeps its recent part: its
 *    traces (with spans and trace analysis) and events stored before the cutoff are removed,
 *    and transcript items timed before it; its session analysis stays until its next
 *    maturation rewrites it.
 * 3. Issues last seen before the cutoff go (with any finding left under them); newer issues
 *    keep their counts, which are history, not telemetry.
 * 4. Scores stored before the cutoff go (docs/scores.md), and so does monitor history older than
 *    it, except a state change whose notification is not yet published (the outbox keeps it
 *    until the relay has sent it). Monitor samples and chart points are pruned by the evaluator.
 *
 * Batched deletes rather than dropping time partitions: the dedupe keys (`(trace_service_id,
 * trace_id)`, span ids) must be unique across all time, which a partitioned table can only
 * enforce with the partition key inside the key. Space freed by deletes is reused by new rows
 * after (auto)vacuum; docs/performance.md has the measurements.
 */
export async function runRetention(
  sql: postgres.Sql,
  o: { defaults: RetentionDefaults; batchSize?: number; logger?: Logger; now?: Date },
): Promise<RetentionResult> {
  const batch = o.batchSize ?? 500;
  const now = o.now ?? new Date();
  const result: RetentionResult = {
    tenants: 0,
    sessions: 0,
    traces: 0,
    events: 0,
    transcriptItems: 0,
    issues: 0,
    scores: 0,
    monitorEvents: 0,
    longestBatchMs: 0,
  };
  const tenants = await sql<
    { id: string; plan: Plan; retention_days: number | null }[]
  >`select id, plan, retention_days from tenants`;
  /** Runs `step` until it removes fewer than a batch; returns rows removed. */
  const drain = async (step: () => Promise<number>) => {
    let total = 0;
    for (;;) {
      const t0 = performance.now();
      const n = await step();
      result.longestBatchMs = Math.max(result.longestBatchMs, performance.now() - t0);
      total += n;
      if (n < batch) return total;
    }
  };
  /** `drain` over one batched `delete ... using doomed` statement: its row count is the step's. */
  const drainRows = (statement: () => postgres.PendingQuery<postgres.Row[]>) =>
    drain(async () => (await statement()).count);
  for (const t of tenants) {
    const days = t.retention_days ?? o.defaults[t.plan] ?? o.defaults.free;
    const cutoff = new Date(now.getTime() - days * 86_400_000);
    result.tenants++;
    result.sessions += await drain(() => expireSessions(sql, t.id, cutoff, batch));
    // Sessions that began before the cutoff but live on: their old rows only.
    const longLived = (
      await sql<{ id: string }[]>`
      select id from sessions where tenant_id = ${t.id} and created_at < ${cutoff} and last_ingested_at >= ${cutoff}`
    ).map((r) => r.id);
    for (let i = 0; i < longLived.length; i += 100) {
      const ids = longLived.slice(i, i + 100);
      result.traces += await drain(() => expireTraces(sql, ids, cutoff, batch));
      result.events += await drainRows(
        () => sql`
        with doomed as (select id from events where session_pk = any(${ids}::uuid[]) and ingested_at < ${cutoff} limit ${batch} for update skip locked)
        delete from events e using doomed where e.id = doomed.id`,
      );
      result.transcriptItems += await drainRows(
        () => sql`
        with doomed as (
          select session_pk, position from transcript_items x where session_pk = any(${ids}::uuid[])
            and (timestamp < ${cutoff} or (source_trace_pk is not null and not exists (select 1 from traces t where t.id = x.source_trace_pk)))
          limit ${batch} for update skip locked)
        delete from transcript_items x using doomed where x.session_pk = doomed.session_pk and x.position = doomed.position`,
      );
      result.transcriptItems += await drain(() => expireRunItems(sql, ids, cutoff, batch));
    }
    result.issues += await drainRows(
      () => sql`
      with doomed as (select id from issues where tenant_id = ${t.id} and last_seen_at < ${cutoff} limit ${batch} for update skip locked)
      delete from issues i using doomed where i.id = doomed.id`,
    );
    result.scores += await drainRows(
      () => sql`
      with doomed as (select id from scores where tenant_id = ${t.id} and created_at < ${cutoff} limit ${batch} for update skip locked)
      delete from scores s using doomed where s.id = doomed.id`,
    );
    result.monitorEvents += await drainRows(
      () => sql`
      with doomed as (
        select monitor_id, seq from monitor_events
        where tenant_id = ${t.id} and occurred_at < ${cutoff} and (event_type is null or published_at is not null)
        limit ${batch} for update skip locked)
      delete from monitor_events e using doomed where e.monitor_id = doomed.monitor_id and e.seq = doomed.seq`,
    );
  }
  const removed =
    result.sessions +
    result.traces +
    result.events +
    result.transcriptItems +
    result.issues +
    result.scores +
    result.monitorEvents;
  if (removed > 0) o.logger?.info("retention removed expired telemetry", { ...result });
  return result;
}

/** Runs the retention job every `intervalSeconds` (first run after one interval); stop() waits for a run. */
export function startRetention(
  sql: postgres.Sql,
  o: { defaults: RetentionDefaults; intervalSeconds: number; logger: Logger },
) {
  let running: Promise<unknown> = Promise.resolve();
  const timer =
    o.intervalSeconds > 0
      ? setInterval(() => {
          running = running
            .then(() => runRetention(sql, { defaults: o.defaults, logger: o.logger }))
            .catch((err) => o.logger.error("retention run failed; next run retries", { err: err as Error }));
        }, o.intervalSeconds * 1000)
      : undefined;
  return {
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}

/**
 * The same items as transcript_items' rule above, in transcript runs (migration 0040): up to
 * `limit` runs holding an item from before `cutoff` or referencing a trace that is gone are
 * rewritten without those items (deleted when none is left), their digest cleared so a
 * re-maturation writes them whole again, as it wrote deleted item rows again. Returns the items
 * removed (at least one per run taken: `drain` stops when fewer than a batch go).
 */
function expireRunItems(sql: postgres.Sql, ids: string[], cutoff: Date, limit: number): Promise<number> {
  const expired = sql`((e->>4)::timestamptz < ${cutoff}
    or (e->>8 is not null and not exists (select 1 from traces t where t.id = (e->>8)::uuid)))`;
  return sql<{ removed: number }[]>`
    with doomed as (
      select r.session_pk, r.position, r.tenant_id from transcript_runs r
      where r.session_pk = any(${ids}::uuid[]) and exists (select 1 from jsonb_array_elements(r.items) e where ${expired})
      limit ${limit} for update skip locked),
    rest as (
      select d.session_pk, d.position, d.tenant_id, jsonb_array_length(r.items) as had,
        coalesce((select jsonb_agg(e order by n) from jsonb_array_elements(r.items) with ordinality as x(e, n) where not ${expired}), '[]'::jsonb) as items
      from doomed d join transcript_runs r on r.session_pk = d.session_pk and r.position = d.position and r.tenant_id = d.tenant_id),
    cut as (
      update transcript_runs r set items = rest.items, digest = null,
        item_ids = array(select e->>1 from jsonb_array_elements(rest.items) with ordinality as x(e, n) order by n)
      from rest where r.session_pk = rest.session_pk and r.position = rest.position and r.tenant_id = rest.tenant_id
        and jsonb_array_length(rest.items) > 0
      returning rest.had - jsonb_array_length(rest.items) as removed),
    gone as (
      delete from transcript_runs r using rest where r.session_pk = rest.session_pk and r.position = rest.position
        and r.tenant_id = rest.tenant_id and jsonb_array_length(rest.items) = 0
      returning rest.had as removed)
    select ((select coalesce(sum(removed), 0) from cut) + (select coalesce(sum(removed), 0) from gone))::int as removed`.then(
    ([row]) => row.removed,
  );
}
