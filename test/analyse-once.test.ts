import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { matureSessions, matureTraces } from "../apps/processor/src/maturation/mature";
import { createLogger } from "@cellar/shared/logger";
import { DEFAULT_HISTORY_PAGING, type HistoryPaging } from "../apps/processor/src/maturation/store";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, type TestStack } from "./helpers/stack";
import { itemRows, itemValues } from "./helpers/transcript-shapes";

/**
 * Analyse once (issue 36, docs/analyse-once.md): the writer stores what a trace contributes to its
 * own analysis with its pending row, trace maturation analyses that instead of the payload and
 * clears it; a trace without one (written before migration 0028, or by an older processor) is
 * analysed from its payload as before, with the same answer.
 */
const silent = createLogger("silent");
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "once" });
});
afterAll(() => stack.stop());

/** Payloads of several shapes: usage details, two responses, tool calls, an unknown model, none. */
function payloads(): Array<Record<string, any>> {
  const start = new Date(Date.now() - 60_000);
  const plain = chatTrace({ sessionId: "s1", messages: [{ role: "user", content: "hi" }], reply: "hello", start });
  const detailed = chatTrace({
    sessionId: "s1",
    messages: [{ role: "user", content: "long" }],
    reply: "ok",
    start: new Date(start.getTime() + 1_000),
    model: "gpt-4o",
    usage: {
      prompt_tokens: 1_000,
      completion_tokens: 300,
      prompt_tokens_details: { cached_tokens: 400 },
      completion_tokens_details: { reasoning_tokens: 120 },
    },
  });
  const tools = chatTrace({
    sessionId: "s2",
    messages: [{ role: "user", content: "weather?" }],
    reply: {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
    },
    start,
    finishReason: "tool_calls",
  }) as Record<string, any>;
  tools.responses.push({
    ...tools.responses[0],
    id: "second",
    choices: [{ index: 0, message: { role: "assistant", content: "Sunny" }, finish_reason: "stop" }],
  });
  const unknown = chatTrace({ sessionId: "s3", messages: [], reply: "?", start, model: "no-such-model" });
  const bare = chatTrace({
    sessionId: "s3",
    messages: [],
    reply: "",
    start,
    usage: { prompt_tokens: 0, completion_tokens: 0 },
  }) as Record<string, any>;
  bare.responses[0].usage = {};
  return [plain, detailed, tools, unknown, bare];
}

test("trace maturation from stored contributions equals maturation from payloads, and clears them", async () => {
  const { sql } = stack.database;
  const messages: IngestMessage[] = [];
  payloads().forEach((p, i) => {
    for (const side of ["new", "old"])
      messages.push({
        kind: "trace",
        tenantId: tenant.tenantId,
        serviceName: "support-bot",
        messageId: `m-${i}-${side}`,
        receivedAt: new Date().toISOString(),
        payload: { ...p, trace_id: `t${i}-${side}`, session_id: `${p.session_id}-${side}` },
      } as unknown as IngestMessage);
  });
  await writeIngestBatch(sql, messages);
  const pending = await sql<{ trace_id: string; contribution: string | null }[]>`
    select t.trace_id, p.contribution from pending_traces p join traces t on t.id = p.trace_pk`;
  expect(pending.length).toBe(messages.length);
  for (const r of pending) expect(JSON.parse(r.contribution!)).toHaveProperty("responses");
  // The "old" copies as a processor before migration 0028 wrote them: no contribution.
  await sql`update pending_traces p set contribution = null from traces t where t.id = p.trace_pk and t.trace_id like '%-old'`;

  const ids = (await sql<{ id: string }[]>`select id from traces`).map((r) => r.id);
  const outcomes = await matureTraces(
    { sql, js: stack.nats.js, topology: stack.nats.topology, logger: console as any, windowSeconds: 0 },
    ids,
  );
  expect([...outcomes.values()].every((o) => o === "matured")).toBe(true);

  const rows = await sql<{ trace_id: string; cost_usd: number | null; metrics: unknown; metrics_delta: unknown }[]>`
    select t.trace_id, a.cost_usd, a.metrics, a.metrics_delta from trace_analyses a join traces t on t.id = a.trace_pk order by t.trace_id`;
  expect(rows.length).toBe(messages.length);
  const of = new Map(rows.map((r) => [r.trace_id, r]));
  for (let i = 0; i < payloads().length; i++) {
    const { trace_id: _a, ...fresh } = of.get(`t${i}-new`)!;
    const { trace_id: _b, ...old } = of.get(`t${i}-old`)!;
    expect(fresh).toEqual(old);
  }
  // Some of them really have metrics (not two empty answers compared).
  expect(rows.some((r) => r.cost_usd !== null && r.cost_usd > 0)).toBe(true);
  const left = await sql`select 1 from pending_traces where contribution is not null`;
  expect(left.length).toBe(0);
});

/** A long conversation's traces (turn i re-sends turns 0..i-1), with padding so each is long. */
function longConversation(sessionId: string, turns: number[]): Array<Record<string, any>> {
  const pad = "Some context the user pasted. ".repeat(20);
  return turns.map((i) => {
    const messages: Array<Record<string, unknown>> = [{ role: "system", content: "Be brief." }];
    for (let k = 0; k < i; k++)
      messages.push({ role: "user", content: `question ${k}: ${pad}` }, { role: "assistant", content: `answer ${k}` });
    messages.push({ role: "user", content: `question ${i}: ${pad}` });
    return {
      ...chatTrace({
        sessionId,
        messages,
        reply: `answer ${i}`,
        start: new Date(Date.UTC(2026, 0, 1, 10, 0, i)),
      }),
      trace_id: `${sessionId}-turn-${i}`,
    };
  });
}

test("sessions folded from digests equal the same sessions folded from payloads, re-opened out of order", async () => {
  const { sql } = stack.database;
  const fellBack: string[] = [];
  const logger = { ...silent, debug: (msg: string) => fellBack.push(msg) };
  const deps = { sql, js: stack.nats.js, topology: stack.nats.topology, logger, windowSeconds: 0 };
  const write = (payloads: Array<Record<string, any>>) =>
    writeIngestBatch(
      sql,
      payloads.map(
        (payload) =>
          ({
            kind: "trace",
            tenantId: tenant.tenantId,
            serviceName: "long-bot",
            messageId: String(payload.trace_id),
            receivedAt: new Date().toISOString(),
            payload,
          }) as unknown as IngestMessage,
      ),
      { digestMinJsonBytes: 0 },
    );
  const snapshot = async (pk: string) => {
    const [a] = await sql`
      select item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd,
        metrics, cost_by_model, tool_costs, tldr from session_analyses where session_pk = ${pk}`;
    const items = (await itemRows(sql, [pk])).map(itemValues);
    return { a, items };
  };
  /** Matures the session from digests, then again from its payloads alone (digests set aside). */
  const compare = async (pk: string, paging?: HistoryPaging) => {
    expect((await matureSessions({ ...deps, historyPaging: paging }, [pk])).get(pk)).toBe("matured");
    const fromDigests = await snapshot(pk);
    const kept = await sql<{ trace_pk: string; digest_z: Uint8Array | null }[]>`
      select z.trace_pk, z.digest_z from trace_payloads z join traces t on t.id = z.trace_pk where t.session_pk = ${pk}`;
    await sql`update trace_payloads z set digest_z = null from traces t where t.id = z.trace_pk and t.session_pk = ${pk}`;
    await sql`update sessions set status = 'active' where id = ${pk}`;
    expect((await matureSessions({ ...deps, historyPaging: paging }, [pk])).get(pk)).toBe("matured");
    const fromPayloads = await snapshot(pk);
    for (const k of kept) await sql`update trace_payloads set digest_z = ${k.digest_z} where trace_pk = ${k.trace_pk}`;
    expect(fromDigests.items.length).toBeGreaterThan(0);
    expect(fromDigests).toEqual(fromPayloads);
  };

  const turns = longConversation(
    "long-1",
    Array.from({ length: 12 }, (_, i) => i),
  );
  // Arrivals out of order: the last turns first; the session matures, then re-opens for the rest.
  await write([...turns.slice(8), ...turns.slice(0, 3)]);
  const [{ id: pk }] = await sql<{ id: string }[]>`select id from sessions where session_id = 'long-1'`;
  const digests =
    await sql`select 1 from trace_payloads z join traces t on t.id = z.trace_pk where t.session_pk = ${pk} and z.digest_z is not null`;
  expect(digests.length).toBeGreaterThan(0);
  await compare(pk);
  // Turn 8 does not extend turn 2's conversation: this fold fell back to the payloads.
  expect(fellBack.length).toBe(1);
  await write(turns.slice(3, 8));
  await compare(pk);
  // The whole conversation, in order now, is folded from its digests alone.
  expect(fellBack.length).toBe(1);
  // Streamed page by page (a session too big to read at once), the same.
  await sql`update sessions set status = 'active' where id = ${pk}`;
  await compare(pk, { ...DEFAULT_HISTORY_PAGING, tracesPerBatch: 1, tracesPerPage: 3 });
  expect(fellBack.length).toBe(1);
});
