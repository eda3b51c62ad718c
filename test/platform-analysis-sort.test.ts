import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Filtered searches that filter or sort on an analysis field (the session rollups, `metrics.*`,
 * trace `costUsd`) answer exactly what docs/platform-api.md says, whichever plan serves them:
 * rows in `sort` order with nulls last and ties broken by row id, the exact `total`, offset pages
 * and cursor walks that visit the same rows. The expected answers are computed here from the
 * seeded rows, not read back from the API. Seeded: sessions without analysis (null rollups),
 * analyses with a null cost, ties on every field, a second service whose rows must never show.
 */
let stack: TestStack;
let key: string;
const SESSIONS = 60;
const ROLLUPS = [
  "durationMs",
  "turns",
  "modelCalls",
  "toolCalls",
  "totalTokens",
  "errors",
  "problems",
  "costUsd",
] as const;
const COLUMN: Record<string, string> = {
  durationMs: "duration_ms",
  turns: "turns",
  modelCalls: "model_calls",
  toolCalls: "tool_calls",
  totalTokens: "total_tokens",
  errors: "errors",
  problems: "problems",
  costUsd: "cost_usd",
};

interface Row {
  pk: string;
  sessionId: string;
  status: string;
  lastActivityAt: string;
  values: Record<string, number | null>;
  p95: number | null;
}
let rows: Row[] = [];
interface TraceRow {
  pk: string;
  traceId: string;
  costUsd: number | null;
}
let traceRows: TraceRow[] = [];

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  const tenant = await bootstrapTenant(stack.database.db, { name: "analysis-sort", plan: "pro" });
  key = tenant.platformKey;
  const sql = stack.database.sql;
  const svc = await createService(stack.database.db, { tenantId: tenant.tenantId, name: "sort-bot" });
  const other = await createService(stack.database.db, { tenantId: tenant.tenantId, name: "other-bot" });
  for (const s of [svc, other]) {
    await sql`
      insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
      select ${tenant.tenantId}, ${s.id}, 'sess-' || g, case when g % 5 = 0 then 'active' else 'matured' end,
        timestamptz '2026-01-01' + g * interval '1 minute', timestamptz '2026-01-01' + g * interval '1 minute', now(), 1, now(), 1
      from generate_series(1, ${SESSIONS}) g`;
    // Every 7th session has no analysis (all rollups null); every 4th analysis has a null cost.
    // Small modules make ties on every field.
    await sql`
      insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq,
        item_count, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, latency_p95_ms, metrics)
      select s.id, s.tenant_id, s.trace_service_id, s.session_id, 1, now(), now(), 1, 0,
        (n % 9) * 1000, n % 4, n % 5, n % 3, (n % 6) * 100, n % 2, n % 3, case when n % 4 = 0 then null else (n % 5) / 100.0 end,
        -- The typed column as the maturation writes it (the number, null for a non-number).
        case when n % 6 = 0 then null else (n % 8) * 1000 end,
        case when n % 6 = 0 then '{"latencyP95Ms": "slow"}'::jsonb else jsonb_build_object('latencyP95Ms', (n % 8) * 1000) end
      from (select s.*, substr(s.session_id, 6)::int as n from sessions s where s.trace_service_id = ${s.id}) s
      where n % 7 <> 0`;
    await sql`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, payload, received_at, status, maturation_count)
      select s.tenant_id, s.trace_service_id, s.id, 'trace-' || s.session_id, s.session_id, 'openai', 'gpt-4o-mini', s.first_activity_at, s.first_activity_at + interval '1 second',
        '{}'::jsonb, now(), 'matured', 1
      from sessions s where s.trace_service_id = ${s.id}`;
    await sql`
      insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics)
      select tr.id, tr.tenant_id, tr.trace_service_id, tr.trace_id, now(), case when n % 4 = 0 then null else (n % 3) / 100.0 end, '{}'::jsonb
      from (select tr.*, substr(tr.session_id, 6)::int as n from traces tr where tr.trace_service_id = ${s.id}) tr
      where n % 5 <> 0`;
  }
  const seeded = await sql`
    select s.id, s.session_id, s.status, s.last_activity_at, a.session_pk is not null as analysed,
      a.duration_ms, a.turns, a.model_calls, a.tool_calls, a.total_tokens, a.errors, a.problems, a.cost_usd, a.metrics
    from sessions s left join session_analyses a on a.session_pk = s.id where s.trace_service_id = ${svc.id}`;
  rows = seeded.map((r) => ({
    pk: r.id,
    sessionId: r.session_id,
    status: r.status,
    lastActivityAt: r.last_activity_at.toISOString(),
    values: Object.fromEntries(ROLLUPS.map((f) => [f, r.analysed ? (r[COLUMN[f]] ?? null) : null])),
    p95: typeof r.metrics?.latencyP95Ms === "number" ? r.metrics.latencyP95Ms : null,
  }));
  const traces =
    await sql`select tr.id, tr.trace_id, ta.cost_usd from traces tr left join trace_analyses ta on ta.trace_pk = tr.id where tr.trace_service_id = ${svc.id}`;
  traceRows = traces.map((r) => ({ pk: r.id, traceId: r.trace_id, costUsd: r.cost_usd ?? null }));
});
afterAll(() => stack.stop());

/** One POST; hundreds of reads in a few seconds, so a 429 (the per-key limit, 50/s) is waited out, never an answer. */
async function post(path: string, body: unknown) {
  let res = await stack.platformRequest(path, { method: "POST", token: key, body: JSON.stringify(body) });
  while (res.status === 429) {
    await Bun.sleep(200);
    res = await stack.platformRequest(path, { method: "POST", token: key, body: JSON.stringify(body) });
  }
  return res;
}

async function ok(path: string, body: unknown) {
  const res = await post(path, body);
  const json = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${path} -> ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** docs/platform-api.md: `sort` direction, nulls last, ties by row id in the same direction. */
function ordered<T extends { pk: string }>(list: T[], value: (r: T) => number | null, dir: "asc" | "desc"): T[] {
  const sign = dir === "asc" ? 1 : -1;
  return [...list].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    if (va === null || vb === null) {
      if (va !== vb) return va === null ? 1 : -1;
    } else if (va !== vb) return sign * (va - vb);
    return sign * (a.pk < b.pk ? -1 : a.pk > b.pk ? 1 : 0);
  });
}

type Filter = { field: string; operator: string; value: unknown };
const NUM: Record<string, (a: number, b: number) => boolean> = {
  equals: (a, b) => a === b,
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
};
function matches(r: Row, f: Filter): boolean {
  if (f.field === "status") return f.operator === "equals" ? r.status === f.value : r.status !== f.value;
  if (f.field === "lastActivityAt") return NUM[f.operator](Date.parse(r.lastActivityAt), Date.parse(f.value as string));
  const v = f.field === "metrics.latencyP95Ms" ? r.p95 : r.values[f.field];
  if (f.operator === "notEquals") return v !== f.value; // `is distinct from`: nulls match
  return v !== null && NUM[f.operator](v, f.value as number);
}

const F = "/telemetry/otel/sessions/filtered";
const PAGE = 11;
const FILTER_CASES: Array<{ name: string; filters: (field: string) => Filter[] }> = [
  { name: "no filter", filters: () => [] },
  {
    name: "a range on the sort field",
    filters: (field) => [{ field, operator: "gte", value: field === "costUsd" ? 0.02 : 1 }],
  },
  {
    name: "notEquals on the sort field (nulls match)",
    filters: (field) => [{ field, operator: "notEquals", value: field === "costUsd" ? 0.01 : 1 }],
  },
  {
    name: "a session field and metrics.latencyP95Ms",
    filters: () => [
      { field: "status", operator: "equals", value: "matured" },
      { field: "metrics.latencyP95Ms", operator: "gt", value: 2000 },
    ],
  },
  {
    name: "a time range and costUsd",
    filters: () => [
      { field: "lastActivityAt", operator: "gte", value: "2026-01-01T00:20:00.000Z" },
      { field: "costUsd", operator: "lt", value: 0.03 },
    ],
  },
];

describe("sessions/filtered on analysis fields", () => {
  for (const field of ROLLUPS) {
    for (const dir of ["desc", "asc"] as const) {
      test(`sort ${field} ${dir}: order, total, offset pages and cursor walks match the documented answer`, async () => {
        for (const c of FILTER_CASES) {
          const filters = c.filters(field);
          const expected = ordered(
            rows.filter((r) => filters.every((f) => matches(r, f))),
            (r) => r.values[field],
            dir,
          ).map((r) => r.sessionId);
          const body = { serviceName: "sort-bot", filters, sort: { field, direction: dir } };
          const all = await ok(F, { ...body, limit: 500 });
          expect({ case: c.name, ids: all.sessions.map((s: any) => s.sessionId), total: all.pagination.total }).toEqual(
            { case: c.name, ids: expected, total: expected.length },
          );
          // Offset pages and a cursor walk of PAGE rows: the same rows, the same totals.
          const byOffset: string[] = [];
          const byCursor: string[] = [];
          let cursor: string | undefined;
          for (let offset = 0; offset < expected.length + PAGE; offset += PAGE) {
            const o = await ok(F, { ...body, limit: PAGE, offset });
            byOffset.push(...o.sessions.map((s: any) => s.sessionId));
            expect(o.pagination).toMatchObject({
              offset,
              total: expected.length,
              hasMore: offset + PAGE < expected.length,
            });
            const k = await ok(F, { ...body, limit: PAGE, cursor, skipTotalCount: offset > 0 });
            byCursor.push(...k.sessions.map((s: any) => s.sessionId));
            expect(k.pagination).toMatchObject({
              offset,
              total: offset > 0 ? null : expected.length,
              hasMore: offset + PAGE < expected.length,
            });
            // An offset page and the cursor page at the same position hand out the same next cursor.
            expect(k.pagination.nextCursor).toBe(o.pagination.nextCursor);
            cursor = k.pagination.nextCursor ?? undefined;
            if (!cursor) break;
          }
          expect({ case: c.name, byOffset, byCursor }).toEqual({
            case: c.name,
            byOffset: expected,
            byCursor: expected,
          });
        }
      });
    }
  }

  test("a metric filter with the total counts only matured matches of this service; notEquals counts the unanalysed", async () => {
    for (const filters of [
      [{ field: "metrics.latencyP95Ms", operator: "gt", value: 4000 }],
      [{ field: "costUsd", operator: "gt", value: 0.02 }],
      [
        { field: "costUsd", operator: "gt", value: 0.01 },
        { field: "turns", operator: "notEquals", value: 2 },
      ],
      [{ field: "turns", operator: "notEquals", value: 2 }],
      [
        { field: "errors", operator: "equals", value: 0 },
        { field: "metrics.latencyP95Ms", operator: "lte", value: 3000 },
      ],
    ]) {
      const expected = rows.filter((r) => filters.every((f) => matches(r, f)));
      const page = await ok(F, { serviceName: "sort-bot", filters, limit: 3 });
      expect({ filters, total: page.pagination.total }).toEqual({ filters, total: expected.length });
    }
  });
});

describe("traces/filtered on costUsd", () => {
  for (const dir of ["desc", "asc"] as const) {
    test(`sort costUsd ${dir}, with and without a cost filter`, async () => {
      const T = "/telemetry/otel/traces/filtered";
      for (const filters of [[], [{ field: "costUsd", operator: "gte", value: 0.01 }]] as Filter[][]) {
        const pass = (t: TraceRow) => filters.every((f) => t.costUsd !== null && t.costUsd >= (f.value as number));
        const expected = ordered(traceRows.filter(pass), (t) => t.costUsd, dir).map((t) => t.traceId);
        const body = { serviceName: "sort-bot", filters, sort: { field: "costUsd", direction: dir } };
        const all = await ok(T, { ...body, limit: 500 });
        expect(all.traces.map((t: any) => t.traceId)).toEqual(expected);
        expect(all.pagination.total).toBe(expected.length);
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 50; i++) {
          const k = await ok(T, { ...body, limit: 9, cursor, skipTotalCount: true });
          seen.push(...k.traces.map((t: any) => t.traceId));
          cursor = k.pagination.nextCursor ?? undefined;
          if (!cursor) break;
        }
        expect(seen).toEqual(expected);
      }
    });
  }
});

test("a cursor whose key type was swapped for another allowed type is a 400, never a 500", async () => {
  const body = { serviceName: "sort-bot", limit: 5, sort: { field: "costUsd", direction: "desc" } };
  const first = await ok(F, body);
  const decoded = JSON.parse(Buffer.from(first.pagination.nextCursor, "base64url").toString());
  for (const swapped of [
    { ...decoded, t: ["uuid", decoded.t[1]] },
    { ...decoded, t: [decoded.t[0], "double precision"], k: [decoded.k[0], "1.5"] },
  ]) {
    const res = await post(F, { ...body, cursor: Buffer.from(JSON.stringify(swapped)).toString("base64url") });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 400,
      body: { error: "invalid cursor: not a cursor returned by this endpoint (pagination.nextCursor)" },
    });
  }
});
