import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { loadSessionContext } from "@cellar/shared/evaluations/load";
import fc from "fast-check";
import { clearPayloadCache } from "../apps/platform/src/query/sessions/payload-cache";
import { readTranscript, readTranscriptItem } from "../apps/platform/src/query/sessions/transcript";
import { buildTranscript, type TranscriptItem } from "../apps/processor/src/analysis/transcript";
import { persistTranscriptItems } from "../apps/processor/src/maturation/persist";
import { RUN_BYTES, storedRuns, TranscriptItemWriter } from "../apps/processor/src/maturation/persist-transcript";
import type { SessionRow } from "../apps/processor/src/maturation/store";
import { parseRetentionDays, runRetention } from "../apps/processor/src/retention/retention";
import { makeTemplates } from "../bench/lib/traces";
import { createTestStack, type TestStack } from "./helpers/stack";
import { itemRows, runsToItemRows, sessionPayloads, storeSessionTraces } from "./helpers/transcript-shapes";

/**
 * Transcript items as one row per trace (issue 36 part 2, migration 0040): every read of a
 * session's transcript (pages by offset and by cursor, each item by id, the evaluations' load)
 * answers byte for byte the same from runs as from the item rows written before; a session
 * stored in the older shape still reads, and its next maturation moves it to runs.
 */
let stack: TestStack;
let tenantId: string;
let serviceId: string;
const templates = makeTemplates(40).map((t) => JSON.parse(t));

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  const t = await bootstrapTenant(stack.database.db, { name: "runs", plan: "pro" });
  tenantId = t.tenantId;
  serviceId = (await createService(stack.database.db, { tenantId, name: "runs-svc" })).id;
});
afterAll(() => stack.stop());

let seq = 0;

interface Stored {
  pk: string;
  sessionId: string;
  items: TranscriptItem[];
  tracePks: string[];
  row: SessionRow;
}

/** A session of these payloads begun an hour ago, matured as maturation stores it (runs). */
async function storeSession(payloads: any[]): Promise<Stored> {
  const { sql } = stack.database;
  const sessionId = `runs-${++seq}`;
  const t0 = Date.now() - 3_600_000 + seq * 1_000;
  const { pk, history } = await storeSessionTraces(sql, { tenantId, serviceId, sessionId, t0, payloads });
  const { items } = buildTranscript(history, []);
  const row = { id: pk, tenant_id: tenantId } as unknown as SessionRow;
  await sql.begin((tx) => persistTranscriptItems(tx, row, items, false));
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, metrics)
    values (${pk}, ${tenantId}, ${serviceId}, ${sessionId}, 1, now(), now(), 1, ${items.length}, '{}'::jsonb)`;
  return { pk, sessionId, items, tracePks: history.map((h) => h.pk!), row };
}

const payloadsOf = (picks: number[], history: boolean) => sessionPayloads(templates, picks, history);

/** Every answer about a session's transcript, as exact text: pages by offset and by cursor, each item, the evaluations' load. */
async function answers(s: Stored, limit: number, content: "lean" | "full"): Promise<string[]> {
  const { sql } = stack.database;
  const out: string[] = [];
  const page = async (q: { offset: number; cursor?: string }) =>
    (await readTranscript(sql, serviceId, s.sessionId, { limit, content, ...q }, 1)).text();
  let total = 0;
  for (let offset = 0; offset === 0 || offset < total; offset += limit) {
    const body = await page({ offset });
    total = JSON.parse(body).pagination.total;
    out.push(body);
  }
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const body = await page({ offset: 0, cursor });
    out.push(body);
    cursor = JSON.parse(body).pagination.nextCursor ?? undefined;
  }
  for (const r of await itemRows(sql, [s.pk]))
    out.push(JSON.stringify(await readTranscriptItem(sql, serviceId, s.sessionId, r.item_id)));
  out.push(JSON.stringify(await loadSessionContext(sql, tenantId, s.pk)));
  return out;
}

test("runs answer every transcript read as the item rows written before do; a re-maturation moves item rows to runs", async () => {
  const { sql } = stack.database;
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        picks: fc.array(fc.nat({ max: templates.length - 1 }), { minLength: 1, maxLength: 16 }),
        history: fc.boolean(),
        limit: fc.integer({ min: 1, max: 40 }),
        content: fc.constantFrom("lean" as const, "full" as const),
      }),
      async ({ picks, history, limit, content }) => {
        const s = await storeSession(payloadsOf(picks, history));
        const rows = await itemRows(sql, [s.pk]);
        expect(rows.length).toBe(s.items.length);
        // One row per trace: a run holds one trace's items, and a trace's items are in a second
        // run only where the first was cut for its size.
        expect(rows.every((r) => r.holder.startsWith("run:"))).toBe(true);
        const runs = await sql<{ traces: string[]; bytes: number; stored: number }[]>`
          select array(select distinct e->>5 from jsonb_array_elements(items) e) as traces, length(items::text) as bytes,
            pg_column_size(t.*) as stored
          from transcript_runs t where session_pk = ${s.pk} order by position`;
        expect(runs.every((r) => r.traces.length === 1)).toBe(true);
        // Inline and uncompressed: under the table's toast_tuple_target (8160), where TOAST would start.
        expect(Math.max(...runs.map((r) => r.stored))).toBeLessThan(8_160);
        for (let i = 1; i < runs.length; i++)
          if (runs[i].traces[0] === runs[i - 1].traces[0]) expect(runs[i - 1].bytes).toBeGreaterThan(RUN_BYTES / 2);
        clearPayloadCache();
        const fromRuns = await answers(s, limit, content);

        await runsToItemRows(sql, [s.pk]);
        expect((await itemRows(sql, [s.pk])).every((r) => r.holder.startsWith("items:"))).toBe(true);
        clearPayloadCache();
        expect(await answers(s, limit, content)).toEqual(fromRuns);

        await sql.begin((tx) => persistTranscriptItems(tx, s.row, s.items, true));
        const moved = await itemRows(sql, [s.pk]);
        expect(moved.every((r) => r.holder.startsWith("run:"))).toBe(true);
        expect(moved.length).toBe(rows.length);
        clearPayloadCache();
        expect(await answers(s, limit, content)).toEqual(fromRuns);
      },
    ),
    { numRuns: 12 },
  );
});

test("a maturation that changes nothing rewrites no run; a session that grows writes only its new runs", async () => {
  const { sql } = stack.database;
  const payloads = payloadsOf([1, 2, 3, 4, 5, 6], true);
  const s = await storeSession(payloads);
  const before = await itemRows(sql, [s.pk]);
  await sql.begin((tx) => persistTranscriptItems(tx, s.row, s.items, true));
  expect((await itemRows(sql, [s.pk])).map((r) => r.xmin)).toEqual(before.map((r) => r.xmin));
  // The same items and more after them: the runs before keep their row versions.
  const extra = {
    ...s.items[s.items.length - 1],
    id: "itm_extra",
    traceId: "another-trace",
    timestamp: new Date().toISOString(),
  };
  await sql.begin((tx) => persistTranscriptItems(tx, s.row, [...s.items, extra], true));
  const after = await itemRows(sql, [s.pk]);
  expect(after.slice(0, before.length).map((r) => r.xmin)).toEqual(before.map((r) => r.xmin));
  expect(after.map((r) => r.item_id)).toEqual([...before.map((r) => r.item_id), "itm_extra"]);
});

test("a chunk's re-matured sessions are checked and written in two statements, whatever their number", async () => {
  const { sql } = stack.database;
  const stored: Stored[] = [];
  for (let k = 0; k < 5; k++) stored.push(await storeSession(payloadsOf([k, k + 1, k + 2, k + 3], true)));
  const before = await itemRows(
    sql,
    stored.map((s) => s.pk),
  );
  // Sessions 1 and 3 have one item changed (its run is written again), one more item each for 4.
  const next = stored.map((s, k) => {
    if (k === 1 || k === 3) return s.items.map((item, i) => (i === 2 ? { ...item, latencyMs: 12_345 } : item));
    if (k === 4) return [...s.items, { ...s.items[s.items.length - 1], id: "itm_more", traceId: "more" }];
    return s.items;
  });
  let statements = 0;
  await sql.begin(async (tx) => {
    const counted = new Proxy(tx, {
      apply: (target, self, args) => {
        statements++;
        return Reflect.apply(target as never, self, args);
      },
    });
    const writer = new TranscriptItemWriter(counted);
    for (const [k, s] of stored.entries()) await persistTranscriptItems(counted, s.row, next[k], true, writer);
    expect(statements).toBe(0);
    await writer.flush();
  });
  expect(statements).toBe(2);
  const after = await itemRows(
    sql,
    stored.map((s) => s.pk),
  );
  const holderOf = (r: (typeof after)[number]) => `${r.session_pk} ${r.holder}`;
  const changed = new Set(
    stored.flatMap((s, k) =>
      k === 1 || k === 3 ? [holderOf(before.find((r) => r.session_pk === s.pk && r.position === 2)!)] : [],
    ),
  );
  for (const r of before) {
    const now = after.find((x) => x.session_pk === r.session_pk && x.position === r.position)!;
    // Unchanged runs keep their row version; the changed item's run alone is written again.
    if (changed.has(holderOf(r))) expect(now.xmin).not.toBe(r.xmin);
    else expect(now.xmin).toBe(r.xmin);
  }
  expect(after.filter((r) => r.item_id === "itm_more").length).toBe(1);
  expect(after.find((r) => r.session_pk === stored[1].pk && r.position === 2)!.item.latencyMs).toBe(12_345);
});

test("runs: one item per id (the first), cut by trace and before RUN_BYTES, the same cut for the same items", () => {
  const row = {
    id: "00000000-0000-0000-0000-000000000001",
    tenant_id: "00000000-0000-0000-0000-000000000002",
  } as unknown as SessionRow;
  const item = (id: string, traceId: string | null, text = "x"): TranscriptItem =>
    ({
      id,
      type: "user",
      role: "user",
      timestamp: "2026-01-01T00:00:00.000Z",
      traceId,
      spanId: null,
      content: text,
    }) as never;
  const runs = (items: TranscriptItem[]) => storedRuns(row, items).map((r) => JSON.parse(r.json));
  const dup = runs([item("a", "t1"), item("b", "t1"), item("a", "t2"), item("c", "t2")]);
  expect(dup.map((r) => [r.position, r.last_position, r.item_ids])).toEqual([
    [0, 1, ["a", "b"]],
    [3, 3, ["c"]],
  ]);
  const many = runs(Array.from({ length: 100 }, (_, i) => item(`i${i}`, "t1")));
  expect(many.length).toBeGreaterThan(1);
  expect(many.flatMap((r) => r.item_ids)).toEqual(Array.from({ length: 100 }, (_, i) => `i${i}`));
  expect(many.every((r) => JSON.stringify(r.items).length <= RUN_BYTES + 2)).toBe(true);
  const big = runs(Array.from({ length: 5 }, (_, i) => item(`b${i}`, "t1", "y".repeat(RUN_BYTES / 2))));
  expect(big.map((r) => r.item_ids.length)).toEqual([1, 1, 1, 1, 1]);
  expect(big.every((r) => JSON.stringify(r.items).length < 8_000)).toBe(true);
  const items = Array.from({ length: 30 }, (_, i) => item(`k${i}`, `t${Math.floor(i / 4)}`));
  expect(storedRuns(row, items)).toEqual(storedRuns(row, structuredClone(items)));
  expect(runs(items).length).toBe(8);
});

test("retention removes a run's expired items and the items of a trace that is gone; the rest reads on", async () => {
  const { sql } = stack.database;
  // A long-lived session: begun 40 days ago, written to since.
  const s = await storeSession(payloadsOf([7, 8, 9, 10], true));
  await sql`update sessions set created_at = now() - interval '40 days', last_ingested_at = now() where id = ${s.pk}`;
  // Its first trace was stored then (retention removes it), its items since.
  await sql`update traces set ingested_at = now() - interval '40 days' where id = ${s.tracePks[0]}`;
  // And one item of the last run (of several items) from before the cutoff: its run is cut, not deleted.
  const last = await sql<{ position: number; n: number }[]>`
    select position, jsonb_array_length(items) as n from transcript_runs where session_pk = ${s.pk} order by position desc limit 1`;
  expect(last[0].n).toBeGreaterThan(1);
  const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
  await sql`update transcript_runs set items = jsonb_set(items, '{0,4}', to_jsonb(${old}::text))
    where session_pk = ${s.pk} and position = ${last[0].position}`;
  const before = await itemRows(sql, [s.pk]);
  const doomed = before.filter((r) => r.source_trace_pk === s.tracePks[0] || r.position === last[0].position);
  expect(doomed.length).toBeGreaterThan(0);
  expect(doomed.length).toBeLessThan(before.length);
  const r = await runRetention(sql, { defaults: parseRetentionDays("30") });
  expect(r.transcriptItems).toBe(doomed.length);
  const left = await itemRows(sql, [s.pk]);
  const key = (x: (typeof left)[number]) => JSON.stringify({ ...x, xmin: 0, holder: 0 });
  expect(left.map(key)).toEqual(before.filter((x) => !doomed.includes(x)).map(key));
  // The cut runs are written whole again by the next maturation (their digest was cleared).
  const [{ cleared }] = await sql<{ cleared: number }[]>`
    select count(*)::int as cleared from transcript_runs where session_pk = ${s.pk} and digest is null`;
  expect(cleared).toBe(1);
  expect((await runRetention(sql, { defaults: parseRetentionDays("30") })).transcriptItems).toBe(0);
});
