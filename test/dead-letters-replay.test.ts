import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { ledgerCounted } from "@cellar/shared/nats/dead-letters";
import { runAdmin } from "./helpers/admin-cli";
import { deadLetterIngest, PRE_FIX_REASON as OLD_REASON } from "./helpers/dead-letters";
import { exportSpans, expectedCost, modelCallSpan, type ModelCall } from "./helpers/genai-spans";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * Issue 21, recovery: before the fix the processor refused every non-OpenAI OTLP model call
 * (`OtlpTracePayload` named Elysia's `date-time` format, unregistered in the processor) and
 * dead-lettered it. Those dead letters are made here exactly as that runtime made them: the
 * INGEST message ingest stored for a real exporter's Anthropic span, pulled from the processor's
 * durable consumer, stored with `writeDeadLetter` under the reason the old decoder gave, then
 * acked (shared/nats/consume.ts, `deadLetter`). After the upgrade `dead-letters replay` lands them.
 */
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let server: ReturnType<typeof Bun.serve>;
let namespace: string;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "lost-spans" });
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => stack.ingest.handle(req) });
  namespace = stack.nats.topology.subjectPrefix.slice(0, -1);
});
afterAll(async () => {
  server.stop(true);
  await stack.stop();
});

const admin = (...args: string[]) =>
  runAdmin(["dead-letters", ...args, "--namespace", namespace], { databaseUrl: stack.databaseUrl });

const transcriptOf = (sessionId: string) =>
  stack.platformRequest(`/telemetry/otel/sessions/claude-desk/${sessionId}/transcript`, { token: tenant.platformKey });

test("dead letters the old processor left for Anthropic OTLP spans replay and land after the upgrade", async () => {
  const call: ModelCall = {
    sessionId: "lost-anthropic-1",
    system: "You are a concise support agent.",
    user: "Where is my parcel?",
    answer: "It left the depot this morning.",
    inputTokens: 42,
    outputTokens: 9,
  };
  // The scenario: the SDK's JSON exporter, current GenAI conventions, answered as stored.
  await exportSpans({
    url: `http://127.0.0.1:${server.port}/v1/traces`,
    credential: tenant.telemetryKey,
    encoding: "json",
    serviceName: "claude-desk",
    spans: [modelCallSpan("genai", "anthropic", call)],
  });
  const [body] = await deadLetterIngest(stack.nats, 1);
  // The request's one INGEST message (issue 36: one per OTLP request), dead-lettered whole.
  expect(body).toMatchObject({ kind: "batch", tenantId: tenant.tenantId });
  expect(body.items).toHaveLength(1);
  expect(body.items[0]).toMatchObject({ kind: "trace", payload: { provider: "anthropic" } });

  // The upgrade: the fixed processor starts. The dead letter stays where it is: nothing landed.
  await stack.startProcessor();
  expect((await transcriptOf(call.sessionId)).status).toBe(404);
  // It counts the dead letter from DEAD_LETTERS (docs/ledger.md), which a replay waits for; the
  // CLI runs synchronously here, holding this process's processor: wait for the count first.
  await waitFor(() => ledgerCounted(stack.nats.jsm, stack.nats.topology, Number.POSITIVE_INFINITY, 0), {
    what: "the dead letter counted by the ledger",
  });

  // Finding them: by stream, tenant and the old reason (docs/dead-letters.md, CHANGELOG.md).
  const find = ["--stream", "ingest", "--tenant", tenant.tenantId, "--reason", "has the wrong type"];
  const listed = admin("list", ...find);
  expect(listed.code).toBe(0);
  expect(listed.json.deadLetters).toHaveLength(1);
  expect(listed.json.deadLetters[0]).toMatchObject({ error: OLD_REASON, tenant: tenant.tenantId, deliveries: 1 });
  expect(admin("list", "--stream", "ingest", "--reason", "no such reason").json.deadLetters).toEqual([]);

  // Within INGEST's 10-minute duplicate window the original id is still remembered: the replay is
  // reported as a duplicate and the dead letter kept. --new-id takes it through.
  const early = admin("replay", "--all", ...find);
  expect(early.json).toMatchObject({ replayed: 0, results: [{ status: "duplicate" }] });
  const replayed = admin("replay", "--all", ...find, "--new-id");
  expect(replayed.code).toBe(0);
  expect(replayed.json).toMatchObject({ replayed: 1, results: [{ status: "replayed" }] });

  const transcript = await waitFor(
    async () => {
      const r = await transcriptOf(call.sessionId);
      const t = r.status === 200 ? await r.json() : null;
      return t?.status === "complete" ? t : null;
    },
    { what: "the replayed call's transcript", timeoutMs: 30_000 },
  );
  expect(transcript.items.map((i: any) => [i.type, i.content])).toEqual([
    ["system", call.system],
    ["user", call.user],
    ["assistant", call.answer],
  ]);
  const metrics = await stack.platformRequest(`/telemetry/metrics/session/claude-desk/${call.sessionId}`, {
    token: tenant.platformKey,
  });
  const { metrics: m } = await metrics.json();
  expect(m).toMatchObject({ modelCalls: 1, promptTokens: call.inputTokens, completionTokens: call.outputTokens });
  expect(m.costUsd).toBeCloseTo(expectedCost("anthropic", call), 12);
  expect(admin("list", ...find).json.deadLetters).toEqual([]);
});
