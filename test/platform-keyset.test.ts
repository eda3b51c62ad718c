import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Keyset paging (docs/platform-api.md, "Deep pages"): every list that pages deep returns
 * `pagination.nextCursor`, takes it back as `cursor`, and walks the same rows in the same order as
 * offsets do, ties and null sort values included. Offsets past the documented depth are a 400
 * naming `offset`; a foreign or tampered cursor is a 400 naming `cursor`, never a 500.
 */
let stack: TestStack;
let key: string;
const SESSIONS = 30;
const SPANS = 25;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  const tenant = await bootstrapTenant(stack.database.db, { name: "keyset", plan: "pro" });
  key = tenant.platformKey;
  const svc = await createService(stack.database.db, { tenantId: tenant.tenantId, name: "deep-bot" });
  const sql = stack.database.sql;
  // Sessions in groups of 3 sharing last_activity_at (ties broken by id); every third session has no
  // analysis, so its costUsd sorts as null (last), and cost repeats so costs tie too.
  await sql`
    insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
    select ${tenant.tenantId}, ${svc.id}, 'sess-' || g, 'matured', timestamptz '2026-01-01' + (g / 3) * interval '1.000123 second',
      timestamptz '2026-01-01' + (g / 3) * interval '1.000123 second', now(), 1, now(), 1
    from generate_series(1, ${SESSIONS}) g`;
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, cost_usd, metrics)
    select s.id, s.tenant_id, s.trace_service_id, s.session_id, 1, now(), now(), 1, 0, (substr(s.session_id, 6)::int % 4) / 100.0, '{}'::jsonb
    from sessions s where s.trace_service_id = ${svc.id} and substr(s.session_id, 6)::int % 3 <> 0`;
  const [long] = await sql<
    { id: string }[]
  >`select id from sessions where trace_service_id = ${svc.id} and session_id = 'sess-1'`;
  await sql`
    insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, payload, received_at, status, maturation_count)
    select ${tenant.tenantId}, ${svc.id}, ${long.id}, 'trace-' || g, 'sess-1', 'openai', 'gpt-4o-mini', timestamptz '2026-01-01' + (g / 2) * interval '1 ms',
      timestamptz '2026-01-01' + (g / 2) * interval '1 ms' + interval '1 second', '{}'::jsonb, now(), 'matured', 1
    from generate_series(1, ${SPANS}) g`;
  await sql`
    insert into spans (tenant_id, trace_service_id, session_pk, trace_pk, span_id, trace_id, session_id, name, kind, start_time, end_time, attributes)
    select tr.tenant_id, tr.trace_service_id, tr.session_pk, tr.id, substr(md5(tr.trace_id), 1, 16), tr.trace_id, tr.session_id, 'call', 'llm', tr.start_time, tr.end_time, '{}'::jsonb
    from traces tr where tr.session_pk = ${long.id}`;
  await sql`update session_analyses set item_count = ${SPANS} where session_pk = ${long.id}`;
  await sql`
    insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, item)
    select ${long.id}, g, ${tenant.tenantId}, 'itm_' || g, 'user', 'user', now(),
      jsonb_build_object('id', 'itm_' || g, 'type', 'user', 'role', 'user', 'timestamp', '2026-01-01T00:00:00.000Z', 'traceId', null, 'spanId', null, 'content', 'hi ' || g)
    from generate_series(0, ${SPANS - 1}) g`;
});
afterAll(() => stack.stop());

async function call(path: string, body?: unknown) {
  const res = await stack.platformRequest(
    path,
    body === undefined ? { token: key } : { method: "POST", token: key, body: JSON.stringify(body) },
  );
  return { status: res.status, body: (await res.json()) as any };
}
async function ok(path: string, body?: unknown) {
  const r = await call(path, body);
  if (r.status !== 200) throw new Error(`${path} -> ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Walks a list by cursor; returns the ids in order and the offsets each page reported. */
async function walk(page: (cursor?: string) => Promise<any>, ids: (b: any) => string[]) {
  const seen: string[] = [];
  const offsets: number[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const b = await page(cursor);
    seen.push(...ids(b));
    offsets.push(b.pagination.offset);
    if (!b.pagination.nextCursor) {
      expect(b.pagination.hasMore).toBe(false);
      return { seen, offsets };
    }
    expect(b.pagination.nextOffset).toBe(b.pagination.offset + ids(b).length);
    cursor = b.pagination.nextCursor;
  }
  throw new Error("cursor walk did not end");
}

const F = "/telemetry/otel/sessions/filtered";
const sessionIds = (b: any) => b.sessions.map((s: any) => s.sessionId);

describe("keyset paging of filtered searches", () => {
  for (const sort of [
    undefined,
    { field: "lastActivityAt", direction: "asc" },
    { field: "costUsd", direction: "desc" },
    { field: "costUsd", direction: "asc" },
    { field: "maturedAt", direction: "desc" },
  ]) {
    test(`sessions/filtered by cursor visits every row once, in offset order (sort ${JSON.stringify(sort ?? "default")})`, async () => {
      const all = sessionIds(await ok(F, { serviceName: "deep-bot", sort, limit: 500 }));
      expect(all).toHaveLength(SESSIONS);
      const { seen, offsets } = await walk(
        (cursor) => ok(F, { serviceName: "deep-bot", sort, limit: 7, cursor }),
        sessionIds,
      );
      expect(seen).toEqual(all);
      expect(offsets).toEqual([0, 7, 14, 21, 28]);
    });
  }

  test("a cursor works with filters and the total count, and keeps the total", async () => {
    const body = { serviceName: "deep-bot", filters: [{ field: "costUsd", operator: "gte", value: 0.01 }], limit: 4 };
    const first = await ok(F, body);
    const all = sessionIds(await ok(F, { ...body, limit: 500 }));
    const second = await ok(F, { ...body, cursor: first.pagination.nextCursor });
    expect(second.pagination.total).toBe(all.length);
    expect(sessionIds(second)).toEqual(all.slice(4, 8));
  });

  test("traces/filtered pages by cursor too, on a computed sort (durationMs, all equal) as well", async () => {
    const T = "/telemetry/otel/traces/filtered";
    for (const sort of [undefined, { field: "durationMs", direction: "asc" }]) {
      const all = (await ok(T, { serviceName: "deep-bot", sort, limit: 500 })).traces.map((t: any) => t.traceId);
      expect(all).toHaveLength(SPANS);
      const { seen } = await walk(
        (cursor) => ok(T, { serviceName: "deep-bot", sort, limit: 6, skipTotalCount: true, cursor }),
        (b) => b.traces.map((t: any) => t.traceId),
      );
      expect(seen).toEqual(all);
    }
  });

  test("a cursor of another query, a garbage or tampered cursor, and cursor with offset are 400s naming the field", async () => {
    const first = await ok(F, { serviceName: "deep-bot", limit: 2 });
    const cursor = first.pagination.nextCursor as string;
    const other = await call(F, {
      serviceName: "deep-bot",
      limit: 2,
      cursor,
      sort: { field: "costUsd", direction: "asc" },
    });
    expect(other.status).toBe(400);
    expect(other.body.error).toStartWith("invalid cursor: it belongs to a different query");
    expect((await call(F, { serviceName: "deep-bot", cursor: "not-a-cursor" })).body.error).toStartWith(
      "invalid cursor",
    );
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString());
    for (const bad of [
      { ...decoded, k: ["not-a-time", decoded.k[1]] },
      { ...decoded, t: ["pg_sleep(10)", decoded.t[1]] },
    ]) {
      const r = await call(F, {
        serviceName: "deep-bot",
        cursor: Buffer.from(JSON.stringify(bad)).toString("base64url"),
      });
      expect(r).toEqual({
        status: 400,
        body: { error: "invalid cursor: not a cursor returned by this endpoint (pagination.nextCursor)" },
      });
    }
    const both = await call(F, { serviceName: "deep-bot", cursor, offset: 2 });
    expect(both.status).toBe(400);
    expect(both.body.error).toStartWith("invalid offset");
  });

  test("an offset past 100000 is a 400 naming offset and pointing at cursor", async () => {
    const r = await call(F, { serviceName: "deep-bot", offset: 100_001 });
    expect(r).toEqual({
      status: 400,
      body: {
        error: "invalid offset: must be an integer from 0 to 100000; page deeper with cursor (pagination.nextCursor)",
      },
    });
  });
});

describe("keyset paging of session lists and the transcript", () => {
  const S = "/telemetry/otel/sessions/deep-bot/sess-1";
  test("spans, traces and events walk by cursor in start order, ties included", async () => {
    for (const [path, ids] of [
      ["spans", (b: any) => b.spans.map((s: any) => s.spanId)],
      ["traces", (b: any) => b.traces.map((t: any) => t.traceId)],
    ] as const) {
      const all = ids(await ok(`${S}/${path}?limit=1000`));
      expect(all).toHaveLength(SPANS);
      const { seen, offsets } = await walk(
        (cursor) => ok(`${S}/${path}?limit=10${cursor ? `&cursor=${cursor}` : ""}`),
        ids,
      );
      expect(seen).toEqual(all);
      expect(offsets).toEqual([0, 10, 20]);
    }
    const events = await ok(`${S}/events?limit=10`);
    expect(events.pagination).toMatchObject({ hasMore: false, nextCursor: null });
  });

  test("a session list offset past 100000 is a 400 naming offset; up to it, offsets answer as before", async () => {
    const r = await call(`${S}/spans?offset=100001`);
    expect(r).toEqual({
      status: 400,
      body: {
        error: "invalid offset: must be an integer from 0 to 100000; page deeper with cursor (pagination.nextCursor)",
      },
    });
    const deep = await ok(`${S}/spans?offset=100000`);
    expect(deep.spans).toEqual([]);
    expect(deep.pagination).toMatchObject({ offset: 100000, hasMore: false, nextOffset: null });
  });

  test("transcript walks by cursor; offsets keep their 1,000,000 limit (the item cap bounds the walk)", async () => {
    const all = (await ok(`${S}/transcript?limit=500`)).items.map((i: any) => i.id);
    expect(all).toHaveLength(SPANS);
    const { seen, offsets } = await walk(
      (cursor) => ok(`${S}/transcript?limit=10${cursor ? `&cursor=${cursor}` : ""}`),
      (b) => b.items.map((i: any) => i.id),
    );
    expect(seen).toEqual(all);
    expect(offsets).toEqual([0, 10, 20]);
    expect((await call(`${S}/transcript?offset=1000000`)).status).toBe(200);
    const foreign = (await ok(`${S}/spans?limit=1`)).pagination.nextCursor;
    expect((await call(`${S}/transcript?cursor=${foreign}`)).body.error).toStartWith("invalid cursor");
  });
});
