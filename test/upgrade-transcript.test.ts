import { afterAll, beforeAll, expect, test } from "bun:test";
import { runMigrations } from "@cellar/shared/db/client";
import { itemFromRow } from "@cellar/shared/analysis/transcript-source";
import { jsonbText } from "@cellar/shared/db/jsonb-text";
import { decodePayload, encodePayload } from "@cellar/shared/db/payload-codec";
import fc from "fast-check";
import { leanItem } from "../apps/platform/src/query/sessions/transcript";
import { buildTranscript } from "../apps/processor/src/analysis/transcript";
import { persistTranscriptItems } from "../apps/processor/src/maturation/persist";
import { parseRetentionDays, runRetention } from "../apps/processor/src/retention/retention";
import { loadHistoryBatch, type SessionRow } from "../apps/processor/src/maturation/store";
import { makeTemplates } from "../bench/lib/traces";
import { insertSession, withDatabaseBefore } from "./helpers/migrated-before";
import { readEndpoints, requestPaced, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { createTestStack, type TestStack } from "./helpers/stack";
import { itemRows, runsToItemRows } from "./helpers/transcript-shapes";

/**
 * Upgrade without loss (issue 28, migration 0018): transcript items become references into the
 * stored payloads. Rows in the old shape (the whole item copied) answer byte for byte as the new
 * rows do; a re-maturation moves them to the new shape with the same answers, and a maturation
 * that changes nothing writes no row.
 */
let stack: TestStack;
let f: PlatformFixture;
const SESSIONS = ["conv-1", "conv-2"];

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
});
afterAll(() => stack.stop());

/** Every transcript read (pages both ways, every item alone) and every platform read, as exact text. */
async function answers(): Promise<string[]> {
  const { sql } = stack.database;
  const paths = readEndpoints(f)
    .filter((e) => e.method === "GET")
    .map((e) => e.path);
  for (const id of SESSIONS) {
    const base = `/telemetry/otel/sessions/support-bot/${id}/transcript`;
    paths.push(base, `${base}?content=full&limit=500`, `${base}?limit=1&offset=1`, `${base}?content=full&limit=2`);
    const [s] = await sql<{ id: string }[]>`select id from sessions where session_id = ${id}`;
    for (const i of await itemRows(sql, [s.id])) paths.push(`${base}/items/${i.item_id}`);
  }
  const out: string[] = [];
  for (const path of paths) {
    const r = await requestPaced(stack, path, { headers: { authorization: `Token ${f.keys.owner}` } });
    out.push(`${path} -> ${r.status} ${r.text}`);
  }
  return out;
}

/** Every item row, whatever its stored shape (runs since migration 0040). */
const transcriptRows = () => itemRows(stack.database.sql);

/** Matures every session's transcript again, as the processor does. */
async function rematureTranscripts(): Promise<void> {
  const { sql } = stack.database;
  const sessions = await sql<{ id: string; tenant_id: string; trace_service_id: string }[]>`
    select id, tenant_id, trace_service_id from sessions where id in (select session_pk from session_analyses)`;
  await sql.begin(async (tx) => {
    const history = await loadHistoryBatch(tx, sessions);
    for (const s of sessions) {
      const h = history.get(s.id)!;
      const { items } = buildTranscript(h.traces, h.events);
      await persistTranscriptItems(tx, s as unknown as SessionRow, items, true);
    }
  });
}

test("transcript rows in the old shape answer as references do; a re-maturation moves them and rewrites only what changed", async () => {
  const { sql } = stack.database;
  const fresh = await answers();
  expect(fresh.every((a) => / -> 200 /.test(a))).toBe(true);
  const rows = await transcriptRows();
  expect(rows.filter((r) => r.source).length).toBeGreaterThan(3);
  // Only what the payload does not hold is stored: no content copied into a referenced row.
  expect(rows.filter((r) => r.source).every((r) => !("content" in r.item) && !("id" in r.item))).toBe(true);

  // Back to what a database written before migration 0018 holds: an item row per item (no runs:
  // migration 0040), the whole item, no reference.
  await runsToItemRows(sql);
  for (const r of rows) {
    const [p] = r.source_trace_pk
      ? await sql<{ payload: unknown; payload_z: Uint8Array | null }[]>`
          select t.payload, z.payload_z from traces t left join trace_payloads z on z.trace_pk = t.id where t.id = ${r.source_trace_pk}`
      : [];
    const item = itemFromRow(r, p ? decodePayload(p) : undefined);
    await sql`update transcript_items set item = ${sql.json(item as never)}, source_trace_pk = null, source = null, digest = null
      where session_pk = ${r.session_pk} and position = ${r.position}`;
  }
  expect((await transcriptRows()).every((r) => r.source === null && "id" in r.item)).toBe(true);
  expect(await answers()).toEqual(fresh);

  // The next maturation writes them in the new shape (runs); the answers stay.
  await rematureTranscripts();
  const moved = await transcriptRows();
  expect(moved.every((r) => r.holder.startsWith("run:"))).toBe(true);
  const [{ legacy }] = await sql<{ legacy: number }[]>`select count(*)::int as legacy from transcript_items`;
  expect(legacy).toBe(0);
  expect(moved.length).toBe(rows.length);
  expect(moved.filter((r) => r.source).length).toBe(rows.filter((r) => r.source).length);
  expect(moved.every((r) => !("id" in r.item))).toBe(true);
  expect(await answers()).toEqual(fresh);

  // A maturation that finds nothing new keeps every row as it is (no row version written).
  await rematureTranscripts();
  expect((await transcriptRows()).map((r) => r.xmin)).toEqual(moved.map((r) => r.xmin));

  // One changed run: only its row is written again (its items, no other).
  const [one] = moved.filter((r) => r.source);
  const run = Number(one.holder.slice(4));
  await sql`update transcript_runs set digest = 0 where session_pk = ${one.session_pk} and position = ${run}`;
  await rematureTranscripts();
  const after = await transcriptRows();
  const rewritten = after.filter((r, i) => r.xmin !== moved[i].xmin);
  expect(rewritten.length).toBeGreaterThan(0);
  expect(new Set(rewritten.map((r) => `${r.session_pk} ${r.holder}`))).toEqual(
    new Set([`${one.session_pk} ${one.holder}`]),
  );
  expect(await answers()).toEqual(fresh);
});

test("retention that removes a trace of a session still written to removes the items showing its messages", async () => {
  const { sql } = stack.database;
  // conv-1 began 40 days ago and is still written to; its first trace (tr-1) was stored then.
  await sql`update sessions set created_at = now() - interval '40 days' where session_id = 'conv-1'`;
  await sql`update traces set ingested_at = now() - interval '40 days' where trace_id = 'tr-1'`;
  const [conv1] = await sql<{ id: string }[]>`select id from sessions where session_id = 'conv-1'`;
  const [first] = await sql<
    { id: string }[]
  >`select id from traces where trace_id = 'tr-1' and session_pk = ${conv1.id}`;
  const before = await itemRows(sql, [conv1.id]);
  const fromFirst = before.filter((r) => r.source_trace_pk === first.id).length;
  expect(fromFirst).toBeGreaterThan(0);
  const r = await runRetention(sql, { defaults: parseRetentionDays("30") });
  expect(r.traces).toBe(1);
  expect(r.transcriptItems).toBe(fromFirst);
  const left = await itemRows(sql, [conv1.id]);
  expect(left.length).toBe(before.length - fromFirst);
  expect(left.filter((r) => r.source_trace_pk === first.id)).toEqual([]);
  // What stays reads as it did: the same rows less the removed ones.
  const key = (r: (typeof left)[number]) => JSON.stringify({ ...r, xmin: 0, holder: 0 });
  expect(left.map(key)).toEqual(before.filter((r) => r.source_trace_pk !== first.id).map(key));
});

test("an item whose payload is gone answers with null content rather than failing", () => {
  const row = {
    item_id: "itm_1",
    kind: "user",
    role: "user",
    timestamp: new Date(0),
    trace_id: "tr-x",
    span_id: "s1",
    item: {},
    source: "req:0",
  };
  expect(itemFromRow(row, undefined)).toEqual({
    id: "itm_1",
    type: "user",
    role: "user",
    timestamp: "1970-01-01T00:00:00.000Z",
    traceId: "tr-x",
    spanId: "s1",
    spanAttributes: {},
    content: null,
  });
});

/** JSON Postgres stores as jsonb: no NUL and no lone surrogate in any string (jsonb refuses both). */
const storable = (v: unknown) => {
  const text = JSON.stringify(v);
  return !/\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(text);
};
const json = fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }).filter(storable);

test("items print as Postgres prints them from jsonb, whatever the values", async () => {
  const { sql } = stack.database;
  const numbers = [0, -0, 1e21, 1.5e-7, -2.5e-10, 5e-324, 1.7976931348623157e308, 123456789012345680000, 0.1 + 0.2];
  await fc.assert(
    fc.asyncProperty(fc.array(json, { maxLength: 20 }), async (values) => {
      const all = [...values, numbers];
      const rows = await sql<{ text: string }[]>`
        select e::text as text from jsonb_array_elements(${JSON.stringify(all)}::text::jsonb) with ordinality as x(e, n) order by n`;
      expect(all.map(jsonbText)).toEqual(rows.map((r) => r.text));
    }),
    { numRuns: 60 },
  );
});

/** Main's lean expression (before migration 0018, items stored whole), the oracle for leanItem. */
const LEAN_SQL = `case when ti.kind in ('tool_call', 'tool_result') then
    (ti.item - 'spanAttributes' - 'reasoning') || jsonb_build_object(
      'content', case when length(c.text) > 500 then to_jsonb(left(c.text, 500)) else ti.item -> 'content' end,
      'contentLength', coalesce(length(c.text), 0),
      'contentTruncated', coalesce(length(c.text), 0) > 500)
  else ti.item - 'spanAttributes' - 'reasoning' end`;

test("lean items are cut as Postgres cut them, counting characters as it does", async () => {
  const { sql } = stack.database;
  const long = fc
    .tuple(fc.string({ unit: "binary", minLength: 480, maxLength: 520 }), fc.constantFrom("", "😀", "é"))
    .map(([a, b]) => a + b)
    .filter(storable);
  const item = fc.record(
    {
      type: fc.constantFrom("tool_call", "tool_result", "user", "assistant", "event"),
      content: fc.oneof(json, long),
      spanAttributes: json,
      reasoning: fc.option(fc.string()),
      toolName: fc.string(),
    },
    { requiredKeys: ["type"] },
  );
  await fc.assert(
    fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 10 }), async (items) => {
      const rows = await sql<{ text: string }[]>`
        select (${sql.unsafe(LEAN_SQL)})::text as text
        from (select e as item, e ->> 'type' as kind, n from jsonb_array_elements(${JSON.stringify(items)}::text::jsonb) with ordinality as x(e, n)) ti
        cross join lateral (select case jsonb_typeof(ti.item -> 'content') when 'string' then ti.item ->> 'content' when 'null' then null
          else (ti.item -> 'content')::text end as text) c
        order by ti.n`;
      expect(items.map((i) => jsonbText(leanItem(i, i.type)))).toEqual(rows.map((r) => r.text));
    }),
    { numRuns: 60 },
  );
});

test("a database at the schema before 0018 with transcript rows in it upgrades; its rows keep answering and move at the next maturation", async () => {
  await withDatabaseBefore(18, async (sql, url) => {
    const payload = JSON.parse(makeTemplates(1)[0].replace("__SESSION__", "up-1"));
    const ids = await insertSession(sql, "up-1");
    const tenant = { id: ids.tenantId };
    const svc = { id: ids.serviceId };
    const s = { id: ids.sessionPk };
    const [tr] = await sql`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, received_at)
      values (${tenant.id}, ${svc.id}, ${s.id}, 'tr-up', 'up-1', 'openai', 'gpt-4o-mini', ${payload.start_time}, ${payload.end_time}, now()) returning id`;
    await sql`insert into trace_payloads (trace_pk, tenant_id, payload_z) values (${tr.id}, ${tenant.id}, ${encodePayload(payload)})`;
    const history = [
      {
        pk: tr.id as string,
        traceId: "tr-up",
        startTime: new Date(payload.start_time),
        endTime: new Date(payload.end_time),
        payload: decodePayload({ payload_z: encodePayload(payload) }),
      },
    ];
    const { items } = buildTranscript(history, []);
    // Written as the processor wrote them before 0018: every item whole.
    for (const [position, item] of items.entries())
      await sql`
        insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item)
        values (${s.id}, ${position}, ${tenant.id}, ${item.id}, ${item.type}, ${item.role}, ${item.timestamp}, ${item.traceId}, ${item.spanId}, ${sql.json(item as never)})`;

    await runMigrations(url);
    const old = await itemRows(sql);
    expect(old.every((r) => r.holder.startsWith("items:"))).toBe(true);
    expect(old.every((r) => r.source === null && r.source_trace_pk === null)).toBe(true);
    expect(old.map((r) => jsonbText(itemFromRow(r)))).toEqual(items.map(jsonbText));

    await sql.begin((tx) =>
      persistTranscriptItems(tx, { id: s.id, tenant_id: tenant.id } as unknown as SessionRow, items, true),
    );
    const moved = await itemRows(sql);
    expect(moved.every((r) => r.holder.startsWith("run:"))).toBe(true);
    expect(moved.every((r) => r.source_trace_pk === tr.id && !("content" in r.item))).toBe(true);
    const decoded = decodePayload({ payload_z: encodePayload(payload) });
    expect(moved.map((r) => jsonbText(itemFromRow(r, decoded)))).toEqual(items.map(jsonbText));
  });
});
