/**
 * `bun run bench/migration-0009.ts [--sessions 200000]`: how long migration 0009 (latency columns
 * backfill + 12 index builds) takes on a database that already holds N matured sessions, i.e.
 * what an upgrade costs. Schema up to 0008 from the same migrations folder (journal cut), N
 * sessions with analyses seeded by SQL, then the real migrator; prints the time beside the floor
 * of the same run: one bare `update` that rewrites every analysis row unchanged.
 */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import { runBench } from "./lib/harness";

const { values: args } = parseArgs({ options: { sessions: { type: "string", default: "200000" } } });
const SESSIONS = Number(args.sessions);
// The schema stops at 0008 (the migrations are run by hand here), so the seed is SQL of that schema.
await runBench("mig", { migrate: false, poolMax: 2 }, async ({ scratch, database, databaseUrl: url }) => {
  const { sql } = database;
  const upTo8 = join(scratch, "migrations");
  cpSync(MIGRATIONS_DIR, upTo8, { recursive: true });
  const journal = JSON.parse(readFileSync(join(upTo8, "meta/_journal.json"), "utf8"));
  journal.entries = journal.entries.filter((e: { idx: number }) => e.idx <= 8);
  writeFileSync(join(upTo8, "meta/_journal.json"), JSON.stringify(journal));
  await migrate(drizzle(sql), { migrationsFolder: upTo8 });
  const [t] = await sql`insert into tenants (name, plan) values ('mig', 'pro') returning id`;
  const [p] = await sql`insert into projects (tenant_id, name) values (${t.id}, 'mig') returning id`;
  const [s] =
    await sql`insert into trace_services (tenant_id, project_id, name) values (${t.id}, ${p.id}, 'mig-bot') returning id`;
  await sql`
    insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
    select ${t.id}, ${s.id}, 'sess-' || g, 'matured', now(), now(), now(), 1, now(), 1 from generate_series(1, ${SESSIONS}) g`;
  // Metrics as the maturation writes them (docs/analysis.md), ~600 bytes.
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq,
      item_count, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, metrics)
    select x.id, x.tenant_id, x.trace_service_id, x.session_id, 1, now(), now(), 1, 10, 80000, 5, 5, 2, 3000, 0, 0, 0.01,
      jsonb_build_object('durationMs', 80000, 'turns', 5, 'traces', 5, 'events', 0, 'modelCalls', 5, 'toolCalls', 2, 'toolResults', 2, 'promptTokens', 2500,
        'completionTokens', 500, 'totalTokens', 3000, 'cachedTokens', 0, 'reasoningTokens', 0, 'latencyP50Ms', hashtext(x.session_id) & 4095,
        'latencyP95Ms', hashtext(x.session_id || 'p') & 8191, 'latencyMaxMs', 9000, 'costUsd', 0.01, 'costComplete', true, 'pricedCostUsd', 0.01,
        'unpricedModels', '[]'::jsonb, 'errors', 0, 'problems', 0, 'finishReasons', '{"stop": 4, "tool_calls": 1}'::jsonb, 'models', '["gpt-4o-mini"]'::jsonb,
        'priceTableVersion', '2025-10-15')
    from sessions x`;
  await sql`vacuum analyze`;
  let t0 = performance.now();
  await sql`update session_analyses set item_count = item_count`;
  const floor = performance.now() - t0;
  await sql`vacuum analyze session_analyses`;
  t0 = performance.now();
  await runMigrations(url);
  const ms = performance.now() - t0;
  const [{ filled }] = await sql`select count(*)::int as filled from session_analyses where latency_p95_ms is not null`;
  console.log(
    `${SESSIONS.toLocaleString("en")} analyses: migration 0009 ${(ms / 1000).toFixed(1)} s (${filled.toLocaleString("en")} rows backfilled); floor (bare update of every row) ${(floor / 1000).toFixed(1)} s; ratio ${(ms / floor).toFixed(1)}x; load ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
});
