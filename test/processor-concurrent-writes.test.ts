import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
});
afterAll(() => stack.stop());

let n = 0;
function traceMessage(sessionId: string, at: Date, traceId?: string): IngestMessage {
  const payload = chatTrace({
    sessionId,
    messages: [{ role: "user", content: `question ${n}` }],
    reply: "answer",
    start: at,
    extra: traceId ? { trace_id: traceId } : {},
  });
  const messageId = `${(++n).toString(16).padStart(8, "0")}${crypto.randomUUID().replace(/-/g, "")}`.padEnd(64, "0");
  return {
    kind: "trace",
    tenantId: tenant.tenantId,
    serviceName: "support-bot",
    messageId,
    receivedAt: new Date().toISOString(),
    payload,
  } as unknown as IngestMessage;
}

test("concurrent INGEST batches over the same sessions and trace ids all land, each counted once", async () => {
  const base = Date.parse("2026-01-01T00:00:00Z");
  // Two batches, each touching the same 20 sessions in opposite orders, plus 10 shared trace ids
  // (a replay racing its original) listed in opposite orders.
  const sessions = Array.from({ length: 20 }, (_, i) => `shared-${i}`);
  const shared = Array.from({ length: 10 }, (_, i) =>
    traceMessage(sessions[i], new Date(base + i * 1000), `shared-trace-${i}`),
  );
  const a = [...sessions.map((s, i) => traceMessage(s, new Date(base + 100_000 + i))), ...shared];
  const b = [
    ...[...sessions].reverse().map((s, i) => traceMessage(s, new Date(base + 200_000 + i))),
    ...[...shared].reverse(),
  ];
  const results = await Promise.all([
    writeIngestBatch(stack.database.sql, a),
    writeIngestBatch(stack.database.sql, b),
    writeIngestBatch(stack.database.sql, a),
  ]);
  expect(results.every((r) => r.activeSessionPks.length > 0)).toBe(true);

  const [{ traces }] = await stack.database.sql<{ traces: number }[]>`select count(*)::int as traces from traces`;
  expect(traces).toBe(20 + 20 + 10);
  const [{ spans }] = await stack.database.sql<
    { spans: number }[]
  >`select ((select count(*) from span_ids) + (select coalesce(sum(cardinality(span_keys)), 0) from traces))::int as spans`;
  expect(spans).toBe(2 * traces);
  const rows = await stack.database.sql<{ session_id: string; activity_seq: number; last: Date }[]>`
    select session_id, activity_seq::int, last_activity_at as last from sessions where session_id like 'shared-%'`;
  expect(rows).toHaveLength(20);
  for (const r of rows) {
    // One write of a and b each brought new rows; the replay of a inserts nothing and does not count.
    expect(r.activity_seq).toBe(2);
    expect(r.last.getTime()).toBeGreaterThanOrEqual(base + 200_000);
  }
});
