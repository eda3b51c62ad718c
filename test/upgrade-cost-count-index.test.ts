import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import { insertSession, withDatabaseBefore } from "./helpers/migrated-before";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Upgrade without loss (issue 28, migration 0023): the count index of session_analyses
 * (trace_service_id, cost_usd) changes no answer: costUsd searches (totals, sorted pages, cursor
 * walks) answer byte for byte the same without it (a database before 0023) and with it, and a
 * database at the schema before 0023 with analyses in it migrates with its rows untouched.
 */
let stack: TestStack;
let key: string;
const MIGRATION = readFileSync(join(MIGRATIONS_DIR, "0023_session_cost_count_index.sql"), "utf8");

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  const tenant = await bootstrapTenant(stack.database.db, { name: "cost-index", plan: "pro" });
  key = tenant.platformKey;
  const svc = await createService(stack.database.db, { tenantId: tenant.tenantId, name: "cost-bot" });
  const sql = stack.database.sql;
  await sql`
    insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
    select ${tenant.tenantId}, ${svc.id}, 'c-' || g, 'matured', timestamptz '2026-02-01' + g * interval '1 minute',
      timestamptz '2026-02-01' + g * interval '1 minute', now(), 1, now(), 1
    from generate_series(1, 40) g`;
  // Null costs (every 4th), sessions without an analysis (every 9th) and ties (7 cost values).
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, cost_usd, metrics)
    select s.id, s.tenant_id, s.trace_service_id, s.session_id, 1, now(), now(), 1, 0,
      case when n % 4 = 0 then null else (n % 7) / 100.0 end, '{}'::jsonb
    from (select s.*, substr(s.session_id, 3)::int as n from sessions s where s.trace_service_id = ${svc.id}) s
    where n % 9 <> 0`;
});
afterAll(() => stack.stop());

async function search(body: Record<string, unknown>) {
  for (;;) {
    const res = await stack.platformRequest("/telemetry/otel/sessions/filtered", {
      method: "POST",
      token: key,
      body: JSON.stringify({ serviceName: "cost-bot", ...body }),
    });
    // Waited out, never answers: the per-key limit (429), and a request past the platform's
    // deadline on an overloaded machine (503 + Retry-After: "retry later").
    if (res.status === 429 || res.status === 503) {
      await Bun.sleep(res.status === 429 ? 200 : 500);
      continue;
    }
    return `${res.status} ${await res.text()}`;
  }
}

/** The costUsd searches' answers, each cursor walk followed to its end. */
async function answers(): Promise<string[]> {
  const out: string[] = [];
  const cases = [
    { filters: [{ field: "costUsd", operator: "gt", value: 0.03 }], sort: { field: "costUsd", direction: "desc" } },
    { filters: [{ field: "costUsd", operator: "lte", value: 0.02 }] },
    { filters: [{ field: "costUsd", operator: "equals", value: 0.05 }], sort: { field: "costUsd" } },
    {
      filters: [{ field: "costUsd", operator: "notEquals", value: 0.01 }],
      sort: { field: "costUsd", direction: "asc" },
    },
    { filters: [{ field: "costUsd", operator: "gte", value: 0 }], skipTotalCount: true },
  ];
  for (const body of cases) {
    let cursor: string | undefined;
    do {
      const answer = await search({ ...body, limit: 6, ...(cursor ? { cursor } : {}) });
      out.push(answer);
      cursor = answer.startsWith("200 ") ? (JSON.parse(answer.slice(4)).pagination.nextCursor ?? undefined) : undefined;
    } while (cursor);
  }
  return out;
}

test("costUsd searches answer byte for byte the same without the count index and with it", async () => {
  const { sql } = stack.database;
  const withIndex = await answers();
  expect(withIndex.every((a) => a.startsWith("200 "))).toBe(true);
  expect(withIndex.length).toBeGreaterThan(10);
  await sql`drop index session_analyses_cost_count_idx`;
  expect(await answers()).toEqual(withIndex);
  await sql.unsafe(MIGRATION);
  expect(await answers()).toEqual(withIndex);
});

test("a database at the schema before 0023 with analyses in it migrates with its rows untouched", async () => {
  await withDatabaseBefore(23, async (sql, url) => {
    const s = await insertSession(sql, "up-1");
    await sql`
      insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, cost_usd, metrics)
      values (${s.sessionPk}, ${s.tenantId}, ${s.serviceId}, 'up-1', 1, now(), now(), 1, 0, 0.25, '{"latencyP95Ms": 10}'::jsonb)`;
    const rows = () => sql`select to_jsonb(a)::text as j from session_analyses a order by 1`;
    const before = await rows();
    await runMigrations(url);
    expect(await rows()).toEqual(before);
    const [idx] = await sql<{ d: string }[]>`
      select indexdef as d from pg_indexes where indexname = 'session_analyses_cost_count_idx'`;
    expect(idx.d).toContain("(trace_service_id, cost_usd)");
  });
});
