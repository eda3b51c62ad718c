import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import { encodePayload } from "@cellar/shared/db/payload-codec";
import { deriveSpans } from "@cellar/shared/spans";
import { findSpans, readTrace, traceSpans } from "../apps/platform/src/query/traces/read";
import { insertLegacySpanRows, legacyTraces } from "../bench/lib/legacy-spans";
import { makeTemplates } from "../bench/lib/traces";
import { callPaced, readEndpoints, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { runsToItemRows } from "./helpers/transcript-shapes";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Upgrade without loss (issue 28, migration 0017): spans are derived from the stored payload when
 * read; traces written before keep their `spans` rows and answer from them. Every platform read
 * answers byte for byte the same whether a trace's spans are stored rows (as the writer before
 * 0017 inserted them) or derived, for some traces or all; session span pages too, by offset and
 * by cursor (the cursors themselves included). And a database at the schema before 0017, with a
 * trace and its span rows, upgrades and answers from those rows.
 */
let stack: TestStack;
let f: PlatformFixture;
const S = "/telemetry/otel/sessions/support-bot/conv-1";

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
});
afterAll(() => stack.stop());

/** Every read endpoint's status and exact body, with the owner's key. */
async function answers(): Promise<string[]> {
  const out: string[] = [];
  for (const e of readEndpoints(f)) {
    const r = await callPaced(stack, e, { authorization: `Token ${f.keys.owner}` });
    out.push(`${e.method} ${e.path} -> ${r.status} ${JSON.stringify(r.body)}`);
  }
  return out;
}

async function text(path: string): Promise<{ status: number; body: string }> {
  const res = await stack.platformRequest(path, { headers: { authorization: `Token ${f.keys.owner}` } });
  return { status: res.status, body: await res.text() };
}

/** conv-1's spans page by page: by cursor (limit 1, then 2) and by every offset, exact bodies. */
async function spanPages(): Promise<string[]> {
  const out: string[] = [];
  for (const limit of [1, 2]) {
    let next: string | null = "";
    for (let i = 0; next !== null && i < 50; i++) {
      const r = await text(`${S}/spans?limit=${limit}${next ? `&cursor=${next}` : ""}`);
      out.push(r.body);
      next = r.status === 200 ? JSON.parse(r.body).pagination.nextCursor : null;
    }
  }
  for (let offset = 0; offset < 12; offset++) out.push((await text(`${S}/spans?limit=3&offset=${offset}`)).body);
  return out;
}

/**
 * What the writer before migration 0017 stored for these traces: their spans as rows (its very
 * insert), and no span_ids rows.
 */
async function storeAsBefore0017(where: (traceId: string, i: number) => boolean) {
  const { sql } = stack.database;
  const chosen = (await legacyTraces(sql)).filter((t, i) => where(t.trace_id, i));
  await insertLegacySpanRows(sql, chosen);
  await sql`delete from span_ids where trace_pk = any(${chosen.map((t) => t.id)}::uuid[])`;
  return chosen.length;
}

test("every read answers the same from stored span rows, derived spans, or a mix of both", async () => {
  const { sql } = stack.database;
  // New traces: no span rows, one span id per derived span (on the trace row since migration 0022).
  const [shape] = await sql<{ spans: number; ids: number; traces: number }[]>`
    select (select count(*) from spans)::int as spans, (select coalesce(sum(cardinality(span_keys)), 0) from traces)::int as ids,
      (select count(*) from traces)::int as traces`;
  expect(shape.spans).toBe(0);
  expect(shape.ids).toBeGreaterThanOrEqual(2 * shape.traces);
  // An item stored without its span's attributes (as before they were copied in) reads them from the span:
  // in an item row of its own, as items were stored then (before migration 0040's runs).
  await runsToItemRows(sql);
  await sql`update transcript_items set item = item - 'spanAttributes' where item_id = ${f.ids.itemId}`;

  const fresh = await answers();
  expect(fresh.every((a) => / -> 200 /.test(a))).toBe(true);
  const item = JSON.parse(fresh.find((a) => a.includes("/transcript/items/"))!.split(" -> 200 ")[1]);
  expect(Object.keys(item.spanAttributes ?? {}).length).toBeGreaterThan(0);
  const pages = await spanPages();
  expect(pages.length).toBeGreaterThan(12);

  // Every other trace as the writer before 0017 stored it, then all of them.
  expect(await storeAsBefore0017((_, i) => i % 2 === 0)).toBeGreaterThan(0);
  expect(await answers()).toEqual(fresh);
  expect(await spanPages()).toEqual(pages);
  await storeAsBefore0017((_, i) => i % 2 === 1);
  const [after] = await sql<{ ids: number }[]>`select count(*)::int as ids from span_ids`;
  expect(after.ids).toBe(0);
  expect(await answers()).toEqual(fresh);
  expect(await spanPages()).toEqual(pages);
});

test("a database at the schema before 0017 with a trace and its span rows upgrades and answers from them", async () => {
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_up17_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  const before = mkdtempSync(join(tmpdir(), "cellar-mig17-"));
  try {
    cpSync(MIGRATIONS_DIR, before, { recursive: true });
    const journalPath = join(before, "meta/_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < 17);
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
    const [t] = await sql`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, received_at)
      values (${tenant.id}, ${svc.id}, ${s.id}, 'tr-up', 'up-1', 'openai', 'gpt-4o-mini', ${payload.start_time}, ${payload.end_time}, now()) returning id`;
    await sql`insert into trace_payloads (trace_pk, tenant_id, payload_z) values (${t.id}, ${tenant.id}, ${encodePayload(payload)})`;
    // Rows as the writer stored them, with an attribute the derivation no longer writes: the rows answer.
    const derived = deriveSpans("tr-up", payload);
    for (const sp of derived)
      await sql`
        insert into spans (tenant_id, trace_service_id, session_pk, trace_pk, span_id, parent_span_id, trace_id, session_id, name, kind, start_time, end_time, attributes)
        values (${tenant.id}, ${svc.id}, ${s.id}, ${t.id}, ${sp.spanId}, ${sp.parentSpanId}, 'tr-up', 'up-1', ${sp.name}, ${sp.kind},
          ${sp.startTime.toISOString()}, ${sp.endTime.toISOString()}, ${JSON.stringify({ ...sp.attributes, "stored.before": 17 })}::jsonb)`;

    await runMigrations(url.toString());
    const ref = { id: svc.id as string, name: "up-bot" };
    const read = await traceSpans(sql, ref, "tr-up");
    expect(read.spans.map((x) => x.spanId).sort()).toEqual(derived.map((x) => x.spanId).sort());
    expect(read.spans.every((x) => x.attributes["stored.before"] === 17)).toBe(true);
    const [one] = await findSpans(sql, [ref], derived[0].spanId);
    expect(one.attributes["stored.before"]).toBe(17);
    expect((await readTrace(sql, ref, "tr-up")).spanCount).toBe(derived.length);
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from span_ids`;
    expect(n).toBe(0);
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 5 });
    rmSync(before, { recursive: true, force: true });
  }
});
