import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import { traceSweepCandidates, tracesOfBatch } from "@cellar/shared/maturation/state";
import { selectMaturing } from "../apps/processor/src/maturation/store";
import { callPaced, readEndpoints, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Upgrade without loss (issue 28, migration 0016): a trace's maturation state moves off the
 * trace row (status, maturation_count, matured_at, published_count, updated twice after insert)
 * to a pending row of its own and the trace's analysis. A database holding traces in every state
 * in the old shape (matured and published, active, matured with the publish owed) answers every
 * platform read byte for byte as the same data written in the new shape; the active trace stays
 * maturable (sweep, batch key) and the owed publish is still found.
 */
let stack: TestStack;
let f: PlatformFixture;
const MIGRATION = join(MIGRATIONS_DIR, "0016_trace_pending_state.sql");

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
});
afterAll(() => stack.stop());

const S = "support-bot";
const traceReads = (id: string) => [
  { method: "GET", path: `/telemetry/otel/trace/${id}?serviceName=${S}` },
  { method: "GET", path: `/telemetry/metrics/trace/${id}` },
];
const filtered = (body: Record<string, unknown>) => ({
  method: "POST",
  path: "/telemetry/otel/traces/filtered",
  body: { serviceName: S, ...body },
});
/** Every read endpoint, plus the trace reads and list filters and sorts that read a trace's state. */
function endpoints(): Array<{ method: string; path: string; body?: unknown }> {
  return [
    ...readEndpoints(f),
    ...traceReads("tr-active"),
    ...traceReads("tr-owed"),
    filtered({ filters: [{ field: "status", operator: "equals", value: "active" }] }),
    filtered({ filters: [{ field: "status", operator: "equals", value: "matured" }] }),
    filtered({ filters: [{ field: "status", operator: "in", value: ["active", "matured"] }] }),
    filtered({ filters: [{ field: "maturedAt", operator: "gt", value: "2000-01-01T00:00:00Z" }] }),
    filtered({ sort: { field: "maturedAt", direction: "asc" } }),
    filtered({ sort: { field: "maturedAt", direction: "desc" }, limit: 1 }),
    filtered({ sort: { field: "status", direction: "asc" } }),
    filtered({ sort: { field: "status", direction: "desc" }, limit: 2 }),
  ];
}
async function answers(): Promise<string[]> {
  const out: string[] = [];
  for (const e of endpoints()) {
    const r = await callPaced(stack, e, { authorization: `Token ${f.keys.owner}` });
    out.push(`${e.method} ${e.path} ${JSON.stringify(e.body ?? null)} -> ${r.status} ${JSON.stringify(r.body)}`);
  }
  return out;
}

/**
 * Two more traces of conv-1, copies of tr-1 written an hour ahead (no marker or sweep touches them
 * while the test runs): `tr-active` still active, `tr-owed` matured with its publish owed.
 */
async function addPendingTraces(sql: postgres.Sql) {
  for (const id of ["tr-active", "tr-owed"]) {
    const [t] = await sql<{ id: string; tenant_id: string; ingested_at: Date }[]>`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
        prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at, ingested_at)
      select tenant_id, trace_service_id, session_pk, ${id}, session_id, environment, provider, model, start_time, end_time,
        prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at, now() + interval '1 hour'
      from traces where trace_id = 'tr-1' returning id, tenant_id, ingested_at`;
    await sql`insert into trace_payloads (trace_pk, tenant_id, payload_z) select ${t.id}, tenant_id, payload_z
      from trace_payloads where trace_pk = (select id from traces where trace_id = 'tr-1')`;
    const maturedAt = id === "tr-owed" ? new Date(t.ingested_at.getTime() + 1_000) : null;
    if (maturedAt)
      await sql`insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics)
        select ${t.id}, tenant_id, trace_service_id, ${id}, ${maturedAt}, cost_usd, metrics from trace_analyses where trace_id = 'tr-1'`;
    // The key's instant from the row itself (a JS Date would drop its microseconds).
    await sql`insert into pending_traces (ingested_at, trace_pk, tenant_id, matured_at)
      select ingested_at, id, tenant_id, ${maturedAt}::timestamptz from traces where id = ${t.id}`;
  }
}

/** Back to the shape before migration 0016: the state on the trace row, its two indexes, no pending rows. */
async function toOldShape(sql: postgres.Sql) {
  await sql`
    update traces t set
      status = case when p.trace_pk is not null and p.matured_at is null then 'active' else 'matured' end,
      maturation_count = case when p.trace_pk is not null and p.matured_at is null then 0 else 1 end,
      matured_at = ta.computed_at,
      published_count = case when p.trace_pk is null then 1 else 0 end
    from traces t2 left join pending_traces p on p.trace_pk = t2.id left join trace_analyses ta on ta.trace_pk = t2.id
    where t2.id = t.id`;
  await sql.unsafe(`
    drop table pending_traces;
    alter table traces alter column status set default 'active', alter column status set not null,
      alter column maturation_count set default 0, alter column maturation_count set not null,
      alter column published_count set default 0, alter column published_count set not null;
    create index traces_active_ingested_idx on traces using btree (status, ingested_at);
    create index traces_unpublished_idx on traces using btree (matured_at) where published_count < maturation_count;`);
}

/** The migration as drizzle runs it: its statements in order. */
async function applyMigration(sql: postgres.Sql) {
  for (const statement of readFileSync(MIGRATION, "utf8").split("--> statement-breakpoint"))
    await sql.unsafe(statement);
}

test("every platform answer is the same on traces written in the old shape and migrated", async () => {
  const { sql } = stack.database;
  await addPendingTraces(sql);
  const fresh = await answers();
  expect(fresh.every((a) => / -> 200 /.test(a))).toBe(true);
  const activeRead = fresh.find((a) => a.startsWith("GET /telemetry/otel/trace/tr-active"));
  expect(activeRead).toContain('"status":"active"');

  await toOldShape(sql);
  const [old] = await sql<{ active: number; owed: number; done: number }[]>`
    select count(*) filter (where status = 'active')::int as active,
      count(*) filter (where status = 'matured' and published_count < maturation_count)::int as owed,
      count(*) filter (where status = 'matured' and published_count = maturation_count)::int as done
    from traces where session_id = 'conv-1'`;
  expect(old.active).toBe(1);
  expect(old.owed).toBe(1);
  expect(old.done).toBeGreaterThan(0);

  await applyMigration(sql);
  expect(await answers()).toEqual(fresh);
  const indexes =
    await sql`select indexname from pg_indexes where tablename = 'traces' and indexname in ('traces_active_ingested_idx', 'traces_unpublished_idx')`;
  expect(indexes).toHaveLength(0);

  // The active trace stays maturable: its batch key and the sweep find it.
  const [active] = await sql<{ id: string; micros: string }[]>`
    select id, (extract(epoch from ingested_at) * 1000000)::bigint::text as micros from traces where trace_id = 'tr-active'`;
  expect(await tracesOfBatch(sql, active.micros)).toEqual([active.id]);
  expect((await traceSweepCandidates(sql, -7200, 100)).map((r) => r.id)).toContain(active.id);
  // The owed publish is still found, with the maturation time its message id carries.
  const owed = await selectMaturing(sql, "trace", { owedOlderThanSeconds: -7200, limit: 100 });
  const [analysis] = await sql<
    { computed_at: Date }[]
  >`select computed_at from trace_analyses where trace_id = 'tr-owed'`;
  expect(owed.map((r) => [r.trace_id, r.status, new Date(r.matured_at!).getTime()])).toEqual([
    ["tr-owed", "matured", analysis.computed_at.getTime()],
  ]);
});

test("a database at the schema before 0016 with traces in every state upgrades to the same state", async () => {
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_up16_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  const before = mkdtempSync(join(tmpdir(), "cellar-mig16-"));
  try {
    cpSync(MIGRATIONS_DIR, before, { recursive: true });
    const journalPath = join(before, "meta/_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < 16);
    writeFileSync(journalPath, JSON.stringify(journal));
    await migrate(drizzle(sql), { migrationsFolder: before });

    const [tenant] = await sql`insert into tenants (name, plan) values ('up', 'pro') returning id`;
    const [project] = await sql`insert into projects (tenant_id, name) values (${tenant.id}, 'up') returning id`;
    const [svc] =
      await sql`insert into trace_services (tenant_id, project_id, name) values (${tenant.id}, ${project.id}, 'up-bot') returning id`;
    const [s] = await sql`
      insert into sessions (tenant_id, trace_service_id, session_id, first_activity_at, last_activity_at, last_ingested_at)
      values (${tenant.id}, ${svc.id}, 'up-1', now(), now(), now()) returning id`;
    // As the old code left them: inserted active, then matured (count 1), then published.
    const states = [
      { id: "t-active", status: "active", count: 0, published: 0, matured: false },
      { id: "t-owed", status: "matured", count: 1, published: 0, matured: true },
      { id: "t-done", status: "matured", count: 1, published: 1, matured: true },
    ];
    for (const x of states)
      await sql`
        insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, received_at,
          status, maturation_count, published_count, matured_at)
        values (${tenant.id}, ${svc.id}, ${s.id}, ${x.id}, 'up-1', 'openai', 'gpt-4o-mini', now(), now(), now(),
          ${x.status}, ${x.count}, ${x.published}, ${x.matured ? sql`now() - interval '1 minute'` : null})`;

    await runMigrations(url.toString());
    const rows = await sql<{ trace_id: string; pending: boolean; owed_at_kept: boolean | null; state_left: boolean }[]>`
      select t.trace_id, p.trace_pk is not null as pending, p.matured_at = t.matured_at as owed_at_kept,
        t.status is not null as state_left
      from traces t left join pending_traces p on p.trace_pk = t.id and p.ingested_at = t.ingested_at and p.tenant_id = t.tenant_id
      order by t.trace_id`;
    expect([...rows]).toEqual([
      { trace_id: "t-active", pending: true, owed_at_kept: null, state_left: true },
      { trace_id: "t-done", pending: false, owed_at_kept: null, state_left: true },
      { trace_id: "t-owed", pending: true, owed_at_kept: true, state_left: true },
    ]);
    // New rows leave the old columns null (no default): a trace row is written once.
    await sql`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, received_at)
      values (${tenant.id}, ${svc.id}, ${s.id}, 't-new', 'up-1', 'openai', 'gpt-4o-mini', now(), now(), now())`;
    const [fresh] = await sql`select status, maturation_count, published_count from traces where trace_id = 't-new'`;
    expect(fresh).toEqual({ status: null, maturation_count: null, published_count: null });
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 5 });
    rmSync(before, { recursive: true, force: true });
  }
});
