import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { matureTraces } from "../apps/processor/src/maturation/mature";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Analyse once (issue 36, docs/analyse-once.md): the writer stores what a trace contributes to its
 * own analysis with its pending row, trace maturation analyses that instead of the payload and
 * clears it; a trace without one (written before migration 0028, or by an older processor) is
 * analysed from its payload as before, with the same answer.
 */
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
