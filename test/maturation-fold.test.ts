import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createLogger } from "@cellar/shared/logger";
import type { IngestMessage } from "@cellar/shared/payloads";
import { conversation, type Step } from "../apps/processor/src/analysis/test-conversations";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { FoldCache } from "../apps/processor/src/maturation/fold-cache";
import { matureSessions, type MaturationDeps } from "../apps/processor/src/maturation/mature";
import { DEFAULT_HISTORY_PAGING } from "../apps/processor/src/maturation/store";
import { createLatencyNorms } from "../apps/processor/src/maturation/norms";
import { createTestStack, type TestStack } from "./helpers/stack";
import { itemRows, itemValues } from "./helpers/transcript-shapes";

/**
 * Continued folds (docs/maturation.md, "Continued folds"): sessions re-opened turn by turn and
 * matured by a processor that keeps its folds store what a processor folding every history whole
 * stores, row for row (the analysis, its findings, tool schemas, intents and transcript), in
 * two tenants fed the same traces. Out-of-order arrivals, a trace gone, and a fold matured
 * elsewhere meanwhile are folded whole; the others are continued.
 */
let stack: TestStack;
let kept: MaturationDeps;
let whole: MaturationDeps;
let tenants: { kept: string; whole: string };
const cache = new FoldCache();
const T0 = Date.now() - 3_600_000;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  const a = await bootstrapTenant(stack.database.db, { name: "kept" });
  const b = await bootstrapTenant(stack.database.db, { name: "whole" });
  tenants = { kept: a.tenantId, whole: b.tenantId };
  const base = {
    sql: stack.database.sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger: createLogger("warn"),
    windowSeconds: 1,
  };
  kept = { ...base, foldCache: cache, latencyNorms: createLatencyNorms(stack.database.sql) };
  whole = { ...base, latencyNorms: createLatencyNorms(stack.database.sql) };
}, 120_000);
afterAll(() => stack?.stop());

/** Trace `k` of a conversation as ingest writes it, at minute `at[k]` after T0. */
function message(tenantId: string, sessionId: string, p: Record<string, any>, k: number, at: number): IngestMessage {
  const start = T0 + at * 60_000;
  const length = Date.parse(p.end_time) - Date.parse(p.start_time);
  return {
    kind: "trace",
    messageId: `${tenantId}-${sessionId}-${k}`,
    tenantId,
    serviceName: "fold-bot",
    receivedAt: new Date().toISOString(),
    payload: {
      ...p,
      session_id: sessionId,
      trace_id: `${sessionId}-t${k}`,
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + length).toISOString(),
    },
  } as unknown as IngestMessage;
}

async function sessionPk(tenantId: string, sessionId: string): Promise<string> {
  const [s] = await stack.database.sql<{ id: string }[]>`
    select id from sessions where tenant_id = ${tenantId} and session_id = ${sessionId}`;
  return s.id;
}

/** What a maturation stored of a session, without what differs between tenants (keys, times). */
async function stored(tenantId: string, sessionId: string) {
  const sql = stack.database.sql;
  const pk = await sessionPk(tenantId, sessionId);
  const traceIds = new Map(
    (await sql<{ id: string; trace_id: string }[]>`select id, trace_id from traces where session_pk = ${pk}`).map(
      (r) => [r.id, r.trace_id],
    ),
  );
  const strip = (row: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(row).filter(
        ([k]) =>
          !/^(id|tenant_id|trace_service_id|session_pk|issue_id|tool_schema_id|intent_id)$|_at$/.test(k) ||
          k === "occurred_at",
      ),
    );
  const [analysis] = await sql`select to_jsonb(a) as j from session_analyses a where session_pk = ${pk}`;
  const findings =
    await sql`select to_jsonb(f) as j from findings f where session_pk = ${pk} order by occurred_at, detector, fingerprint, id`;
  const schemas = await sql`
    select ts.name, ts.schema_hash from session_tool_schemas s join tool_schemas ts on ts.id = s.tool_schema_id
    where s.session_pk = ${pk} order by ts.name, ts.schema_hash`;
  const items = (await itemRows(sql, [pk])).map((r) => {
    const { session_pk: _s, source_trace_pk, ...v } = itemValues(r);
    return { ...v, source_trace: source_trace_pk ? traceIds.get(source_trace_pk) : null };
  });
  return {
    analysis: strip(analysis.j),
    findings: findings.map((f) => strip(f.j)),
    schemas: [...schemas],
    items,
  };
}

/** Writes the traces of both tenants' copies of the sessions, then matures each tenant's. */
async function turn(
  parts: Array<{ sessionId: string; traces: Array<[Record<string, any>, number, number]> }>,
  paging?: MaturationDeps["historyPaging"],
) {
  for (const tenantId of [tenants.kept, tenants.whole])
    await writeIngestBatch(
      stack.database.sql,
      parts.flatMap(({ sessionId, traces }) => traces.map(([p, k, at]) => message(tenantId, sessionId, p, k, at))),
    );
  await Bun.sleep(1_200); // the window passes
  for (const [deps, tenantId] of [
    [kept, tenants.kept],
    [whole, tenants.whole],
  ] as const) {
    const pks = await Promise.all(parts.map((p) => sessionPk(tenantId, p.sessionId)));
    const outcomes = await matureSessions(paging ? { ...deps, historyPaging: paging } : deps, pks);
    for (const pk of pks) expect(outcomes.get(pk)).toBe("matured");
  }
  for (const { sessionId } of parts)
    expect(await stored(tenants.kept, sessionId)).toEqual(await stored(tenants.whole, sessionId));
}

const CONVERSATIONS: Step[][] = [
  ["say", "say", "say", "say", "say", "say", "say", "say"],
  ["say", "tool", "say", "inject", "say", "two", "say", "say"],
  ["say", "edit", "say", "window", "say", "drop", "fresh", "say"],
  ["two", "two", "tool", "tool", "say", "retry", "say", "say"],
];

test("sessions re-opened turn by turn store from a continued fold what a whole fold stores", async () => {
  const sessions = CONVERSATIONS.map((steps, c) => ({
    sessionId: `fold-${c}`,
    payloads: conversation(
      steps,
      c + 1,
      new Array(steps.length).fill(false),
      [800, 20_000, 800, 3_000, 800, 800, 20_000, 800],
    ),
  }));
  // Turns 0-1, then 2-3, then 4-5, then 6-7: a fold is kept from a session's second maturation
  // on, so the third and fourth continue the one before.
  for (let from = 0; from < 8; from += 2) {
    const before = cache.stats.continued;
    await turn(
      sessions.map((s) => ({
        sessionId: s.sessionId,
        traces: [from, from + 1].map((k) => [s.payloads[k], k, k] as [Record<string, any>, number, number]),
      })),
    );
    expect(cache.stats.continued - before).toBe(from > 2 ? sessions.length : 0);
  }
}, 120_000);

test("a trace arriving before the folded ones, and a trace gone, fold the whole history", async () => {
  const payloads = conversation(["say", "say", "say", "say", "say", "say"], 9, new Array(6).fill(false));
  const at = (k: number) => [payloads[k], k, 10 * k] as [Record<string, any>, number, number];
  await turn([{ sessionId: "late", traces: [at(0)] }]);
  await turn([{ sessionId: "late", traces: [at(2)] }]);
  // Trace 1 starts before trace 2, folded already: not an extension.
  let refused = cache.stats.refused;
  await turn([{ sessionId: "late", traces: [at(1), at(3)] }]);
  expect(cache.stats.refused).toBe(refused + 1);
  // Continued again from that whole fold.
  const continued = cache.stats.continued;
  await turn([{ sessionId: "late", traces: [at(4)] }]);
  expect(cache.stats.continued).toBe(continued + 1);
  // A folded trace deleted (as retention does) in both tenants: the fold is not continued.
  for (const tenantId of [tenants.kept, tenants.whole])
    await stack.database.sql`delete from traces where tenant_id = ${tenantId} and trace_id = 'late-t0'`;
  refused = cache.stats.refused;
  await turn([{ sessionId: "late", traces: [at(5)] }]);
  expect(cache.stats.refused).toBe(refused + 1);
}, 120_000);

test("a session matured by another processor since this one folded it is folded whole", async () => {
  const payloads = conversation(["say", "say", "say", "say", "say"], 11, new Array(5).fill(false));
  const at = (k: number) => [payloads[k], k, k] as [Record<string, any>, number, number];
  await turn([{ sessionId: "elsewhere", traces: [at(0)] }]);
  await turn([{ sessionId: "elsewhere", traces: [at(1)] }]);
  // Another processor (no shared cache) matures the kept tenant's session after a new turn.
  await writeIngestBatch(stack.database.sql, [message(tenants.kept, "elsewhere", payloads[2], 2, 2)]);
  await writeIngestBatch(stack.database.sql, [message(tenants.whole, "elsewhere", payloads[2], 2, 2)]);
  await Bun.sleep(1_200);
  const other = { ...whole, foldCache: new FoldCache() };
  expect((await matureSessions(other, [await sessionPk(tenants.kept, "elsewhere")])).size).toBe(1);
  expect((await matureSessions(whole, [await sessionPk(tenants.whole, "elsewhere")])).size).toBe(1);
  const refused = cache.stats.refused;
  await turn([{ sessionId: "elsewhere", traces: [at(3), at(4)] }]);
  expect(cache.stats.refused).toBe(refused + 1);
}, 120_000);

test("sessions streamed page by page (larger than a page) continue too, in the streamed order", async () => {
  // Pages of 3 traces: every session here is streamed (store.ts streamHistory), whole and kept.
  const paging = { ...DEFAULT_HISTORY_PAGING, tracesPerBatch: 3, tracesPerPage: 3 };
  const payloads = conversation(["say", "tool", "say", "inject", "two", "say", "say", "say", "say", "say"], 21, [
    false,
    false,
    true,
    false,
    false,
    false,
    true,
    false,
    false,
    false,
  ]);
  const at = (k: number) => [payloads[k], k, k] as [Record<string, any>, number, number];
  await turn([{ sessionId: "streamed", traces: [0, 1, 2, 3].map(at) }], paging);
  const continued = cache.stats.continued;
  await turn([{ sessionId: "streamed", traces: [4, 5].map(at) }], paging);
  await turn([{ sessionId: "streamed", traces: [6, 7, 8].map(at) }], paging);
  expect(cache.stats.continued).toBe(continued + 1);
  // The same session now read as a batch (default pages): a fold streamed is not continued as one.
  const refused = cache.stats.refused;
  await turn([{ sessionId: "streamed", traces: [at(9)] }]);
  expect(cache.stats.refused).toBe(refused + 1);
}, 120_000);
