import { afterAll, beforeAll, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { sourcedFields, sourcedParts } from "@cellar/shared/analysis/transcript-source";
import { jsonbText } from "@cellar/shared/db/jsonb-text";
import fc from "fast-check";
import { clearPayloadCache } from "../apps/platform/src/query/sessions/payload-cache";
import { readTranscript } from "../apps/platform/src/query/sessions/transcript";
import { buildTranscript } from "../apps/processor/src/analysis/transcript";
import { persistTranscriptItems } from "../apps/processor/src/maturation/persist";
import type { SessionRow } from "../apps/processor/src/maturation/store";
import { makeTemplates } from "../bench/lib/traces";
import { createTestStack, type TestStack } from "./helpers/stack";
import { sessionPayloads, storeSessionTraces } from "./helpers/transcript-shapes";

/**
 * The transcript page read of issue 28's second round (docs/performance.md, "Transcript page
 * read"): jsonbText's fast paths print what the escaping and ordering they replace printed, and
 * pages of generated sessions read the same whether items are stored whole (the oracle: the
 * shape before migration 0018) or as references, with the payload cache cold or warm, and after
 * a referenced trace is deleted the cache never answers for it.
 */
let stack: TestStack;
let tenantId: string;
/** Sessions stored whole go to the first service, the same sessions as references to the second. */
let services: { whole: string; refs: string };
const templates = makeTemplates(40).map((t) => JSON.parse(t));

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  const t = await bootstrapTenant(stack.database.db, { name: "pages", plan: "pro" });
  tenantId = t.tenantId;
  services = {
    whole: (await createService(stack.database.db, { tenantId, name: "page-whole" })).id,
    refs: (await createService(stack.database.db, { tenantId, name: "page-refs" })).id,
  };
});
afterAll(() => stack.stop());

/** jsonbText before this round: every key compared in UTF-8 bytes, every string escaped by a regex. */
function previousJsonbText(value: unknown): string {
  const order = (a: string, b: string) =>
    Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b));
  const quote = (s: string) => `"${s.replace(/["\\\u0000-\u001f]/g, (c) => JSON.stringify(c).slice(1, -1))}"`;
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return quote(value);
  if (typeof value === "number") return Number.isFinite(value) ? jsonbText(value) : "null";
  if (typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(previousJsonbText).join(", ")}]`;
  const keys = Object.keys(value as object)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort(order);
  return `{${keys.map((k) => `${quote(k)}: ${previousJsonbText((value as Record<string, unknown>)[k])}`).join(", ")}}`;
}

test("jsonbText prints what it printed before its fast paths, lone surrogates and non-ASCII keys included", () => {
  const key = fc.oneof(fc.string({ unit: "binary", maxLength: 6 }), fc.constantFrom("a", "é", "ab", "\u{1f600}", "z"));
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: "small" },
      fc.string({ unit: "binary" }),
      fc.string({ unit: fc.constantFrom("a", "\n", '"', "\\", "\u0001", "\u007f", "\u2028", "\ud800", "\udc00", "é") }),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie("node"), { maxLength: 4 }),
      fc.dictionary(key, tie("node"), { maxKeys: 6 }),
    ),
  })).node;
  fc.assert(
    fc.property(value, (v) => {
      expect(jsonbText(v)).toBe(previousJsonbText(v));
    }),
    { numRuns: 300 },
  );
});

let sessionSeq = 0;

/** A session of these traces stored as maturation stores it (`whole`: every item copied, as before 0018). */
async function storeSession(payloads: any[], whole: boolean, seq = ++sessionSeq) {
  const { sql } = stack.database;
  const serviceId = whole ? services.whole : services.refs;
  const sessionId = `page-${seq}`;
  const t0 = Date.UTC(2026, 0, 1) + seq * 86_400_000;
  const { pk, history } = await storeSessionTraces(sql, { tenantId, serviceId, sessionId, t0, payloads });
  const s = { id: pk };
  const { items } = buildTranscript(history, []);
  if (whole)
    for (const [position, item] of items.entries())
      await sql`
        insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item)
        values (${s.id}, ${position}, ${tenantId}, ${item.id}, ${item.type}, ${item.role}, ${item.timestamp}, ${item.traceId}, ${item.spanId}, ${sql.json(item as never)})`;
  else
    await sql.begin((tx) =>
      persistTranscriptItems(tx, { id: s.id, tenant_id: tenantId } as unknown as SessionRow, items, false),
    );
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, metrics)
    values (${s.id}, ${tenantId}, ${serviceId}, ${sessionId}, 1, now(), now(), 1, ${items.length}, '{}'::jsonb)`;
  return { sessionId, count: items.length, tracePks: history.map((h) => h.pk!) };
}

/** The items of a page, as the exact text of the answer (the rest of the answer names the session). */
async function pageItems(
  serviceId: string,
  sessionId: string,
  limit: number,
  offset: number,
  content: "lean" | "full",
) {
  const body = await (
    await readTranscript(stack.database.sql, serviceId, sessionId, { limit, offset, content }, 1)
  ).text();
  return body.slice(body.indexOf('"items":['), body.lastIndexOf('],"truncated":'));
}

/** Payloads of a session: each trace a template, or a conversation resent whole (history). */
const sessionArb = fc.record({
  picks: fc.array(fc.nat({ max: templates.length - 1 }), { minLength: 1, maxLength: 24 }),
  history: fc.boolean(),
  limit: fc.integer({ min: 1, max: 60 }),
  content: fc.constantFrom("lean" as const, "full" as const),
});

const payloadsOf = (picks: number[], history: boolean) => sessionPayloads(templates, picks, history);

test("pages of generated sessions read as items stored whole do, with the payload cache cold and warm", async () => {
  await fc.assert(
    fc.asyncProperty(sessionArb, async ({ picks, history, limit, content }) => {
      const payloads = payloadsOf(picks, history);
      const whole = await storeSession(payloads, true);
      const refs = await storeSession(payloads, false, sessionSeq);
      expect(refs.count).toBe(whole.count);
      const expected = new Map<number, string>();
      for (let offset = 0; offset < whole.count; offset += limit) {
        expected.set(offset, await pageItems(services.whole, whole.sessionId, limit, offset, content));
        clearPayloadCache();
        expect(await pageItems(services.refs, refs.sessionId, limit, offset, content)).toBe(expected.get(offset)!);
        expect(await pageItems(services.refs, refs.sessionId, limit, offset, content)).toBe(expected.get(offset)!);
      }
      // Pages backwards with what the others kept: a trace shared with the next page has only that
      // page's parts kept (a miss, decoded again and kept with both pages' parts).
      for (const [offset, text] of [...expected].reverse())
        expect(await pageItems(services.refs, refs.sessionId, limit, offset, content)).toBe(text);
    }),
    { numRuns: 15 },
  );
});

test("a deleted trace's payload is never answered from the cache", async () => {
  const { sql } = stack.database;
  const payloads = payloadsOf([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], false);
  const refs = await storeSession(payloads, false);
  const before = await pageItems(services.refs, refs.sessionId, 100, 0, "lean");
  expect(await pageItems(services.refs, refs.sessionId, 100, 0, "lean")).toBe(before); // warm now
  // Traces 0 and 10: one carried by the page's statement, one fetched in a later batch.
  const gone = [refs.tracePks[0], refs.tracePks[10]];
  await sql`delete from trace_payloads where trace_pk = any(${gone}::uuid[])`;
  await sql`delete from traces where id = any(${gone}::uuid[])`;
  const warm = await pageItems(services.refs, refs.sessionId, 100, 0, "lean");
  clearPayloadCache();
  const cold = await pageItems(services.refs, refs.sessionId, 100, 0, "lean");
  expect(warm).toBe(cold);
  expect(warm).not.toBe(before);
});

test("the parts of a payload kept for some sources give those sources' fields as the whole payload does", () => {
  const source = fc
    .tuple(fc.constantFrom("req", "res"), fc.nat({ max: 5 }), fc.option(fc.nat({ max: 2 }), { nil: undefined }))
    .map(([at, i, k]) => (k === undefined ? `${at}:${i}` : `${at}:${i}:call:${k}`));
  const message = fc.record(
    {
      role: fc.constantFrom("user", "assistant", "tool"),
      content: fc.oneof(fc.string(), fc.constant(null), fc.jsonValue({ maxDepth: 2 })),
      tool_calls: fc.array(
        fc.record({ id: fc.string(), function: fc.record({ name: fc.string(), arguments: fc.jsonValue() }) }),
        {
          maxLength: 3,
        },
      ),
      reasoning: fc.option(fc.string()),
      refusal: fc.option(fc.string()),
    },
    { requiredKeys: ["role"] },
  );
  const payload = fc.record(
    {
      request: fc.record({ messages: fc.oneof(fc.array(message, { maxLength: 6 }), fc.jsonValue({ maxDepth: 1 })) }),
      responses: fc.array(
        fc.record({
          model: fc.option(fc.string()),
          usage: fc.jsonValue({ maxDepth: 1 }),
          choices: fc.array(fc.record({ message, finish_reason: fc.option(fc.string()) }), { maxLength: 2 }),
        }),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(payload, fc.array(source, { minLength: 1, maxLength: 6 }), (p, sources) => {
      const parts = sourcedParts(p, sources);
      for (const s of sources)
        for (const type of ["assistant", "user", "tool_call", "tool_result"])
          expect(jsonbText(sourcedFields(parts, s, type))).toBe(jsonbText(sourcedFields(p, s, type)));
    }),
    { numRuns: 300 },
  );
});
