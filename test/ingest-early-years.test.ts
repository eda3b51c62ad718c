import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

// Found by the ingest fuzz run: postgres.js parses instants with Date(), which takes year 0050
// for 1950; ingest therefore accepts years 0100-9999 (docs/ingestion.md), and the writer reads
// its new rows' instants back as epoch milliseconds rather than Dates.
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 3600 });
  tenant = await bootstrapTenant(stack.database.db, { name: "early-years" });
});
afterAll(() => stack.stop());

test("a year before 0100 is a 400 naming the field", async () => {
  const auth = { authorization: `Bearer ${tenant.telemetryKey}` };
  const body = chatTrace({
    sessionId: "y0099",
    messages: [{ role: "user", content: "hi" }],
    reply: "hello",
    start: new Date("0099-12-31T23:59:59Z"),
  });
  const res = await stack.ingestRequest("/raw/traces", JSON.stringify(body), auth);
  expect(res.status).toBe(400);
  expect((await res.json()).error).toContain("start_time");
});

test("traces and events in early centuries land with their own instants as the session's activity", async () => {
  const auth = { authorization: `Bearer ${tenant.telemetryKey}` };
  const cases = [
    { sessionId: "y0100", start: "0100-01-01T00:00:00.000Z" },
    { sessionId: "y0150", start: "0150-06-01T00:00:00.000Z" },
    { sessionId: "y0999", start: "0999-12-31T23:59:59.000Z" },
  ];
  for (const c of cases) {
    const body = chatTrace({
      sessionId: c.sessionId,
      messages: [{ role: "user", content: "hi" }],
      reply: "hello",
      start: new Date(c.start),
      durationMs: 1000,
    });
    const res = await stack.ingestRequest("/raw/traces", JSON.stringify(body), auth);
    expect(res.status).toBe(200);
  }
  const ev = {
    service_name: "support-bot",
    session_id: "y0150",
    trace_id: "ev-0150",
    name: "note",
    timestamp: "0150-06-01T00:00:05Z",
  };
  expect((await stack.ingestRequest("/raw/events", JSON.stringify(ev), auth)).status).toBe(200);

  await waitFor(
    async () => {
      const rows = await stack.database.sql`select count(*)::int as n from events where trace_id = 'ev-0150'`;
      return rows[0].n === 1;
    },
    { what: "the early event to land", timeoutMs: 30_000 },
  );
  const rows = await stack.database.sql<{ session_id: string; first: string; last: string }[]>`
    select session_id, to_char(first_activity_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as first,
           to_char(last_activity_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as last
    from sessions where session_id in ('y0100', 'y0150', 'y0999') order by session_id`;
  expect([...rows]).toEqual([
    { session_id: "y0100", first: "0100-01-01T00:00:00", last: "0100-01-01T00:00:01" },
    { session_id: "y0150", first: "0150-06-01T00:00:00", last: "0150-06-01T00:00:05" },
    { session_id: "y0999", first: "0999-12-31T23:59:59", last: "1000-01-01T00:00:00" },
  ]);
});
