import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

/**
 * The typed latency columns of session_analyses (migration 0009): the migration fills them for
 * rows written before it, and every maturation (first and re-maturation) writes them from the
 * metrics it stores, so `metrics.latency*` filters read the same values from either place.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
});
afterAll(() => stack.stop());

test("migration 0009 backfills the latency columns of existing analyses (numbers only; null otherwise)", async () => {
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_mig_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  const upTo8 = mkdtempSync(join(tmpdir(), "cellar-mig-"));
  try {
    // The schema as it was before 0009: the same migrations folder, journal cut after idx 8.
    cpSync(MIGRATIONS_DIR, upTo8, { recursive: true });
    const journalPath = join(upTo8, "meta/_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx <= 8);
    writeFileSync(journalPath, JSON.stringify(journal));
    await migrate(drizzle(sql), { migrationsFolder: upTo8 });
    const [{ exists }] =
      await sql`select exists (select 1 from information_schema.columns where table_name = 'session_analyses' and column_name = 'latency_p95_ms') as exists`;
    expect(exists).toBe(false);

    const [tenant] = await sql`insert into tenants (name, plan) values ('mig', 'pro') returning id`;
    const [project] = await sql`insert into projects (tenant_id, name) values (${tenant.id}, 'mig') returning id`;
    const [svc] =
      await sql`insert into trace_services (tenant_id, project_id, name) values (${tenant.id}, ${project.id}, 'mig-bot') returning id`;
    const metrics = [
      { latencyP50Ms: 120, latencyP95Ms: 480.5, latencyMaxMs: 900 },
      { latencyP50Ms: "fast", latencyP95Ms: null, turns: 2 },
      {},
    ];
    for (const [i, m] of metrics.entries()) {
      const [s] = await sql`
        insert into sessions (tenant_id, trace_service_id, session_id, first_activity_at, last_activity_at, last_ingested_at)
        values (${tenant.id}, ${svc.id}, ${"s" + i}, now(), now(), now()) returning id`;
      await sql`
        insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, metrics)
        values (${s.id}, ${tenant.id}, ${svc.id}, ${"s" + i}, 1, now(), now(), 1, 0, ${JSON.stringify(m)}::jsonb)`;
    }
    await runMigrations(url.toString());
    const rows =
      await sql`select session_id, latency_p50_ms, latency_p95_ms, latency_max_ms from session_analyses order by session_id`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { session_id: "s0", latency_p50_ms: 120, latency_p95_ms: 480.5, latency_max_ms: 900 },
      { session_id: "s1", latency_p50_ms: null, latency_p95_ms: null, latency_max_ms: null },
      { session_id: "s2", latency_p50_ms: null, latency_p95_ms: null, latency_max_ms: null },
    ]);
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 5 });
    rmSync(upTo8, { recursive: true, force: true });
  }
});

test("maturation and re-maturation write the latency columns from the metrics they store", async () => {
  const tenant = await bootstrapTenant(stack.database.db, { name: "latency" });
  await stack.startProcessor();
  const send = async (body: unknown) => {
    const r = await stack.ingestRequest("/raw/traces", body, { authorization: `Bearer ${tenant.telemetryKey}` });
    expect(r.status).toBe(200);
  };
  const read = () => stack.database.sql<
    {
      maturation_count: number;
      latency_p50_ms: number | null;
      latency_p95_ms: number | null;
      latency_max_ms: number | null;
      metrics: any;
    }[]
  >`
    select a.maturation_count, a.latency_p50_ms, a.latency_p95_ms, a.latency_max_ms, a.metrics
    from session_analyses a join sessions s on s.id = a.session_pk where s.session_id = 'lat-1'`;
  const start = new Date(Date.now() - 60_000);
  await send(
    chatTrace({
      sessionId: "lat-1",
      messages: [{ role: "user", content: "hi" }],
      reply: "hello",
      start,
      durationMs: 700,
    }),
  );
  const [first] = await waitFor(
    async () => {
      const r = await read();
      return r[0]?.maturation_count === 1 && r;
    },
    { what: "first maturation" },
  );
  expect(first.metrics.latencyMaxMs).toBe(700);
  expect([first.latency_p50_ms, first.latency_p95_ms, first.latency_max_ms]).toEqual([
    first.metrics.latencyP50Ms,
    first.metrics.latencyP95Ms,
    first.metrics.latencyMaxMs,
  ]);

  await send(
    chatTrace({
      sessionId: "lat-1",
      messages: [{ role: "user", content: "again" }],
      reply: "slow",
      start: new Date(start.getTime() + 1_000),
      durationMs: 4_300,
    }),
  );
  const [second] = await waitFor(
    async () => {
      const r = await read();
      return r[0]?.maturation_count === 2 && r;
    },
    { what: "re-maturation" },
  );
  expect(second.metrics.latencyMaxMs).toBe(4_300);
  expect([second.latency_p50_ms, second.latency_p95_ms, second.latency_max_ms]).toEqual([
    second.metrics.latencyP50Ms,
    second.metrics.latencyP95Ms,
    second.metrics.latencyMaxMs,
  ]);

  // And the API's metric filter finds the session through the column.
  const res = await stack.platformRequest("/telemetry/otel/sessions/filtered", {
    method: "POST",
    token: tenant.platformKey,
    body: JSON.stringify({
      serviceName: "support-bot",
      filters: [{ field: "metrics.latencyMaxMs", operator: "gt", value: 4_000 }],
    }),
  });
  const body = (await res.json()) as any;
  expect(body.sessions.map((s: any) => s.sessionId)).toEqual(["lat-1"]);
  expect(body.pagination.total).toBe(1);
});
