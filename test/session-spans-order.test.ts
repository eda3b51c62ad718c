import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import type { IngestMessage } from "@cellar/shared/payloads";
import { deriveSpans } from "@cellar/shared/spans";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { loadSession } from "../apps/platform/src/query/sessions/row";
import { sessionSpans } from "../apps/platform/src/query/sessions/telemetry";
import { insertLegacySpanRows, legacyTraces } from "../bench/lib/legacy-spans";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * A session's spans are derived trace by trace (apps/platform/src/query/sessions/span-walk.ts), yet
 * every page must be the slice of one total order (start, then span id) that a query on rows
 * gave: generated sessions with overlapping traces, equal starts, microsecond starts, one or two
 * responses, some traces stored as rows (before 0017), walked by cursor and by offset with
 * random page sizes, against all the spans derived at once and sorted.
 */
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "order" });
});
afterAll(() => stack.stop());

const BASE = Date.parse("2026-01-01T00:00:00Z");
/** An instant with microseconds, as SDKs may send it. */
const isoMicros = (us: number) =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, "0")}Z`;

const traceArb = fc.record({
  // Equal starts, whole milliseconds and microseconds.
  startUs: fc.oneof(
    fc.constantFrom(0, 1_000, 500_000, 500_400),
    fc.integer({ min: 0, max: 4_000 }).map((ms) => ms * 1000),
    fc.integer({ min: 0, max: 4_000_000 }),
  ),
  durationUs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 6_000_000 })),
  responses: fc.constantFrom(1, 2),
  legacy: fc.boolean(),
});

/**
 * Found by this property on CI: 8 traces (one batch of the walk), the last starting at a
 * microsecond instant; the walk's next batch came back with that trace again, because the
 * driver turned its start (a parameter typed timestamptz) into a Date without the microseconds.
 */
type TraceCase = typeof traceArb extends fc.Arbitrary<infer T> ? T : never;
const zero: TraceCase = { startUs: 0, durationUs: 0, responses: 1, legacy: false };
const microsecondBatchEnd: [TraceCase[], number] = [
  [zero, zero, zero, zero, zero, { ...zero, startUs: 500_400 }, zero, zero],
  2,
];

let run = 0;
test("pages by cursor and by offset are slices of the one span order, whatever the traces' overlaps", async () => {
  const { sql } = stack.database;
  await fc.assert(
    fc.asyncProperty(
      fc.array(traceArb, { minLength: 1, maxLength: 25 }),
      fc.integer({ min: 1, max: 7 }),
      async (traces, limit) => {
        const sessionId = `order-${++run}`;
        const messages = traces.map((t, i) => {
          const startUs = BASE * 1000 + t.startUs;
          const payload = chatTrace({
            sessionId,
            messages: [{ role: "user", content: `q${i}` }],
            reply: `a${i}`,
          }) as any;
          payload.start_time = isoMicros(startUs);
          payload.end_time = isoMicros(startUs + t.durationUs);
          payload.trace_id = `${sessionId}-t${i}`;
          if (t.responses === 2) payload.responses.push({ ...payload.responses[0], id: `second-${i}` });
          return {
            kind: "trace",
            tenantId: tenant.tenantId,
            serviceName: "support-bot",
            messageId: `${sessionId}-m${i}`,
            receivedAt: new Date().toISOString(),
            payload,
          } as unknown as IngestMessage;
        });
        await writeIngestBatch(sql, messages);
        const stored = (await legacyTraces(sql)).filter(
          (t) => t.session_id === sessionId && traces[Number(t.trace_id.split("-t")[1])].legacy,
        );
        await insertLegacySpanRows(sql, stored);
        if (stored.length) await sql`delete from span_ids where trace_pk = any(${stored.map((t) => t.id)}::uuid[])`;

        const expected = messages
          .flatMap((m) => deriveSpans((m.payload as any).trace_id, m.payload as any))
          .map((s) => ({ ms: s.startTime.getTime(), id: s.spanId }))
          .sort((a, b) => a.ms - b.ms || (a.id < b.id ? -1 : 1))
          .map((s) => s.id);

        const [svc] = await sql<{ id: string }[]>`select id from trace_services where tenant_id = ${tenant.tenantId}`;
        const ctx = { sql, serviceName: "support-bot", session: await loadSession(sql, svc.id, sessionId) };
        const byCursor: string[] = [];
        let cursor: string | undefined;
        for (let i = 0; i <= expected.length; i++) {
          const page = await sessionSpans(ctx, { limit, offset: 0, cursor });
          byCursor.push(...page.spans.map((s) => s.spanId));
          if (!page.pagination.nextCursor) break;
          cursor = page.pagination.nextCursor;
        }
        expect(byCursor).toEqual(expected);
        for (let offset = 0; offset <= expected.length; offset += limit) {
          const page = await sessionSpans(ctx, { limit, offset });
          expect(page.spans.map((s) => s.spanId)).toEqual(expected.slice(offset, offset + limit));
          expect(page.pagination.hasMore).toBe(offset + limit < expected.length);
        }
      },
    ),
    { numRuns: 25, examples: [microsecondBatchEnd] },
  );
  // Each run pages a session one span at a time, decoding its traces per page: a loaded machine
  // needs more than the default minute for 25 of them.
}, 300_000);
