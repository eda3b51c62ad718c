import type postgres from "postgres";
import { writeNewEvaluator } from "@cellar/shared/evaluations/write";

/** The evaluator bench/seed.ts judges every seeded session with (a deterministic check). */
export const SEED_EVALUATOR = "short";

/**
 * What the platform's newer reads read, at the seeded size (bench/seed.ts, after its traces):
 *
 * - the ledger (docs/ledger.md): per minute over --days, what the SDK was asked to send, what the
 *   batch door accepted and what was stored (the read groups a window's minutes);
 * - evaluations (docs/evaluations.md): one evaluator judging a sample of one session in 10 (a
 *   judge's cost keeps it to a sample), each judgement stored as the dispatcher stores it (an
 *   evaluation row and, when scored, a score of source `evaluator`); one judgement in 1,000
 *   failed, so a list of the failed ones reads past many scored ones; a reviewer's score on one
 *   session in 200 (each also judged: the agreement read's pairs).
 *
 * Idempotent and incremental as the traces are: only minutes, sessions and reviews not yet there.
 */
export async function seedNewerReads(
  sql: postgres.Sql,
  o: { tenantId: string; serviceId: string; service: string; days: number; traces: number },
): Promise<void> {
  const { tenantId: T, serviceId: S } = o;
  const t0 = performance.now();
  const perMinute = Math.max(1, Math.round(o.traces / (o.days * 1440)));
  const ledger = await sql`
    insert into ledger_counts (tenant_id, service_name, minute, stage, reason, count)
    select ${T}, ${o.service}, m, s.stage, s.reason, ${perMinute}
    from generate_series(date_trunc('minute', now()) - interval '1 day' * ${o.days}, date_trunc('minute', now()), interval '1 minute') m
    cross join (values ('sdk_requested', ''), ('accepted', 'batch'), ('stored', '')) s(stage, reason)
    on conflict do nothing`;

  let [evaluator] = await sql<{ id: string }[]>`
    select id from evaluators where trace_service_id = ${S} and name = ${SEED_EVALUATOR}`;
  if (!evaluator) {
    const id = await writeNewEvaluator(
      { sql, resolveDns: async () => [], allowlist: [], now: () => new Date() },
      T,
      { service_name: o.service, name: SEED_EVALUATOR, check: { type: "length", max: 500 }, status: "paused" },
      async () => ({ id: S }),
    );
    evaluator = { id };
  }
  // Paused: its judgements are there to be read; an active one would judge every session a bench
  // at this size matures (e2e --data-dir), work the same bench at 0 stored does not do.
  await sql`update evaluators set status = 'paused', status_reason = 'seeded for reads' where id = ${evaluator.id} and status = 'active'`;
  const E = evaluator.id;
  const [judged] = await sql<{ n: number }[]>`
    with e as (
      insert into evaluations (tenant_id, trace_service_id, evaluator_id, evaluator_version, target, entity_id, maturation_count,
        transcript_hash, mode, status, score_id, value, error, attempts, duration_ms, created_at)
      select ${T}, ${S}, ${E}, 1, 'session', s.session_id, 1, md5(s.session_id), 'live', v.status,
        case when v.status = 'scored' then gen_random_uuid() end,
        case when v.status = 'scored' then (v.g % 3 <> 0)::int::float8 end,
        case when v.status = 'failed' then 'the judge answered 500' end, 1, 3, s.matured_at + interval '1 second'
      from sessions s
      cross join lateral (select substr(s.session_id, 6)::int as g) n
      cross join lateral (select n.g, case when n.g % 10000 = 0 then 'failed' else 'scored' end as status) v
      where s.trace_service_id = ${S} and s.session_id like 'seed-%' and n.g % 10 = 0
        and not exists (select 1 from evaluations x where x.trace_service_id = ${S} and x.target = 'session' and x.entity_id = s.session_id)
      returning id, entity_id, score_id, value, created_at),
    sc as (
      insert into scores (id, tenant_id, trace_service_id, target, session_id, name, data_type, value, source, idempotency_key,
        created_at, evaluator_id, evaluator_version)
      select score_id, ${T}, ${S}, 'session', entity_id, ${SEED_EVALUATOR}, 'boolean', value, 'evaluator', 'evaluation:' || id,
        created_at, ${E}, 1
      from e where score_id is not null
      returning 1)
    select count(*)::int as n from e`;
  const reviews = await sql`
    insert into scores (tenant_id, trace_service_id, target, session_id, name, data_type, value, source, idempotency_key, created_at)
    select ${T}, ${S}, 'session', s.session_id, ${SEED_EVALUATOR}, 'boolean', (substr(s.session_id, 6)::int % 5 <> 0)::int::float8,
      'reviewer', 'review:' || s.session_id, s.matured_at + interval '1 hour'
    from sessions s
    where s.trace_service_id = ${S} and s.session_id like 'seed-%' and substr(s.session_id, 6)::int % 200 = 0
    on conflict do nothing`;
  console.log(
    `seed: newer reads' rows added: ${ledger.count.toLocaleString("en")} ledger counts (${perMinute} per minute and stage), ${judged.n.toLocaleString("en")} evaluations, ${reviews.count.toLocaleString("en")} reviewer scores, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}
