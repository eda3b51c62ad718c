import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { backfillPayloads } from "../apps/processor/src/upgrade/payload-backfill";
import { makeTemplates } from "../bench/lib/traces";
import { callPaced, readEndpoints, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Upgrade without loss (issue 28, migration 0015): trace payloads move from jsonb to the
 * app-compressed shape. Every platform read answers byte for byte the same on rows in the old
 * shape, and after the backfill moved them; and a database migrated only up to the schema before
 * 0015, with a trace in it, upgrades and backfills to the same payload.
 */
let stack: TestStack;
let f: PlatformFixture;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
});
afterAll(() => stack.stop());

/** Every read endpoint's status and exact body text, with the owner's key. */
async function answers(): Promise<string[]> {
  const out: string[] = [];
  for (const e of readEndpoints(f)) {
    const r = await callPaced(stack, e, { authorization: `Token ${f.keys.owner}` });
    out.push(`${e.method} ${e.path} -> ${r.status} ${JSON.stringify(r.body)}`);
  }
  return out;
}

test("every platform answer is the same on rows in the old shape and after the backfill moved them", async () => {
  const { sql } = stack.database;
  const fresh = await answers();
  expect(fresh.every((a) => / -> 200 /.test(a))).toBe(true);

  // Back to what a database written before migration 0015 holds: jsonb payload, no new columns.
  const rows = await sql<{ id: string; payload: unknown; payload_z: Uint8Array }[]>`
    select t.id, t.payload, z.payload_z from traces t join trace_payloads z on z.trace_pk = t.id`;
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows)
    await sql`update traces set payload = ${sql.json(decodePayload(r) as never)}, prompt_tokens = null,
      completion_tokens = null, total_tokens = null, awaits_messages = null where id = ${r.id}`;
  await sql`delete from trace_payloads`;
  expect(await answers()).toEqual(fresh);

  // The backfill moves every row (small batches to exercise the keyset walk), and answers stay.
  expect(await backfillPayloads(sql, { batch: 2 })).toBe(rows.length);
  const [left] = await sql<
    { old: number; moved: number }[]
  >`select (select count(*) from traces where payload is not null)::int as old, (select count(*) from trace_payloads)::int as moved`;
  expect(left).toEqual({ old: 0, moved: rows.length });
  expect(await answers()).toEqual(fresh);
  expect(await backfillPayloads(sql)).toBe(0);
});

test("a database at the schema before 0015 with a trace in it upgrades, and the backfill keeps its payload", async () => {
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_up15_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  const before = mkdtempSync(join(tmpdir(), "cellar-mig15-"));
  try {
    cpSync(MIGRATIONS_DIR, before, { recursive: true });
    const journalPath = join(before, "meta/_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < 15);
    writeFileSync(journalPath, JSON.stringify(journal));
    await migrate(drizzle(sql), { migrationsFolder: before });

    const payload = JSON.parse(makeTemplates(1)[0].replace("__SESSION__", "up-1"));
    const [tenant] = await sql`insert into tenants (name, plan) values ('up', 'pro') returning id`;
    const [project] = await sql`insert into projects (tenant_id, name) values (${tenant.id}, 'up') returning id`;
    const [svc] =
      await sql`insert into trace_services (tenant_id, project_id, name) values (${tenant.id}, ${project.id}, 'up-bot') returning id`;
    const [s] = await sql`
      insert into sessions (tenant_id, trace_service_id, session_id, first_activity_at, last_activity_at, last_ingested_at)
      values (${tenant.id}, ${svc.id}, 'up-1', now(), now(), now()) returning id`;
    await sql`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, payload, received_at)
      values (${tenant.id}, ${svc.id}, ${s.id}, 'tr-up', 'up-1', 'openai', 'gpt-4o-mini', now(), now(), ${JSON.stringify(payload)}::jsonb, now())`;

    await runMigrations(url.toString());
    expect(await backfillPayloads(sql)).toBe(1);
    const [row] = await sql<
      { payload: unknown; payload_z: Uint8Array; prompt_tokens: string; total_tokens: string }[]
    >`select t.payload, z.payload_z, t.prompt_tokens::text, t.total_tokens::text from traces t join trace_payloads z on z.trace_pk = t.id`;
    expect(row.payload).toBeNull();
    expect(decodePayload(row)).toEqual(payload);
    expect(Number(row.prompt_tokens)).toBe(payload.responses[0].usage.prompt_tokens);
    expect(Number(row.total_tokens)).toBe(payload.responses[0].usage.total_tokens);
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 5 });
    rmSync(before, { recursive: true, force: true });
  }
});
