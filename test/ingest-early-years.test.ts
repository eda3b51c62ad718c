import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

// Found by the ingest fuzz run: the writer read instants back through postgres.js's Date
// parsing, which takes year 0050 for 1950 (and some years for NaN, failing the batch).
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 3600 });
  tenant = await bootstrapTenant(stack.database.db, { name: "early-years" });
});
afterAll(() => stack.stop());

test("traces and events in the first centuries land with their own instants as the session's activity", async () => {
  const auth = { authorization: `Bearer ${tenant.telemetryKey}` };
  const cases = [
    { sessionId: "y0050", start: "0050-06-01T00:00:00.000Z" },
    { sessionId: "y0001", start: "0001-01-01T00:00:00.000Z" },
    { sessionId: "y0999", start: "0999-12-31T23:59:59.000Z" },
  ];
  for (const c of cases) {
    const body = chatTrace({ sessionId: c.sessionId, messages: [{ role: "user", content: "hi" }], reply: "hello", start: new Date(c.start), durationMs: 1000 });
    const res = await stack.ingestRequest("/raw/traces", JSON.stringify(body), auth);
    expect(res.status).toBe(200);
  }
  const ev = { service_name: "support-bot", session_id: "y0050", trace_id: "ev-0050", name: "note", timestamp: "0050-06-01T00:00:05Z" };
  expect((await stack.ingestRequest("/raw/events", JSON.stringify(ev), auth)).status).toBe(200);

  await waitFor(async () => {
    const rows = await stack.database.sql`select count(*)::int as n from events where trace_id = 'ev-0050'`;
    return rows[0].n === 1;
  }, { what: "the early event to land", timeoutMs: 30_000 });
  const rows = await stack.database.sql<{ session_id: string; first: string; last: string }[]>`
    select session_id, to_char(first_activity_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as first,
           to_char(last_activity_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as last
    from sessions where session_id in ('y0050', 'y0001', 'y0999') order by session_id`;
  expect([...rows]).toEqual([
    { session_id: "y0001", first: "0001-01-01T00:00:00", last: "0001-01-01T00:00:01" },
    { session_id: "y0050", first: "0050-06-01T00:00:00", last: "0050-06-01T00:00:05" },
    { session_id: "y0999", first: "0999-12-31T23:59:59", last: "1000-01-01T00:00:00" },
  ]);
});
