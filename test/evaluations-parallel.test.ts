// The evaluation runner judges a MATURED message's maturations side by side (issue 36): a batch
// of sessions with a model judge is not judged one call after the other, and one failing
// judgement neither holds nor fails the others. Real Postgres and NATS (the harness's), the
// sessions ingested and matured by the real processor, the runner's handler called with a
// batch message of them; the provider is faked with msw.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import type { JsMsg } from "@nats-io/jetstream";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import type { MaturedBatch } from "@cellar/shared/payloads";
import { createRunnerState, handleEvaluations } from "../apps/dispatcher/src/evaluations/runner";
import { evaluationRunnerDeps } from "./helpers/evaluation-runner";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

// Nothing listens here: every call is answered by msw.
const JUDGE_URL = "http://127.0.0.1:9/v1/chat/completions";
const SERVICE = "parallel-judged";
const SESSIONS = Array.from({ length: 12 }, (_, i) => `par-${i}`);
const FAILING = "par-5";
const SLOW_MS = 300;
/** Opens once every other session's verdict is recorded: the failing call answers only then. */
let othersRecorded: () => void;
const othersDone = new Promise<void>((r) => (othersRecorded = r));

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let inFlight = 0;
let peak = 0;
const answeredAt = new Map<string, number>();

const judged = (reply: { score: number; reason: string }) =>
  HttpResponse.json({
    choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(reply) }, finish_reason: "stop" }],
    usage: { prompt_tokens: 100, completion_tokens: 10 },
  });

const msw = setupServer(
  http.post(JUDGE_URL, async ({ request }) => {
    const prompt = JSON.stringify(await request.json());
    const session = SESSIONS.find((s) => prompt.includes(`question of ${s}.`)) ?? "unknown";
    peak = Math.max(peak, ++inFlight);
    try {
      // The failing session's call is answered (a 500) only once every other verdict is recorded
      // (or after 15 s, and then the test fails): run one after the other, they would wait for it.
      if (session === FAILING) await Promise.race([othersDone, Bun.sleep(15_000)]);
      else await Bun.sleep(SLOW_MS);
      answeredAt.set(session, performance.now());
      if (session === FAILING) return new HttpResponse("upstream overloaded", { status: 500 });
      return judged({ score: 0.7, reason: `judged ${session}` });
    } finally {
      inFlight--;
    }
  }),
);

beforeAll(async () => {
  msw.listen({ onUnhandledRequest: "bypass" });
  stack = await createTestStack({ windowSeconds: 1, webhooks: { insecureAllowlist: "127.0.0.0/8" } });
  tenant = await bootstrapTenant(stack.database.db, { name: "parallel-evals" });
}, 60_000);

afterAll(async () => {
  msw.close();
  await stack?.stop();
});

test("a batch's judgements overlap, and one failing judgement neither holds nor fails the others", async () => {
  for (const s of SESSIONS) {
    const trace = chatTrace({
      sessionId: s,
      serviceName: SERVICE,
      messages: [{ role: "user", content: `question of ${s}.` }],
      reply: `answer for ${s}`,
    });
    const res = await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${tenant.telemetryKey}` });
    expect(res.status).toBe(200);
  }
  const sessions = await waitFor(
    async () => {
      const rows = await stack.database.sql<
        { id: string; session_id: string; trace_service_id: string; maturation_count: number }[]
      >`select id, session_id, trace_service_id, maturation_count from sessions
        where tenant_id = ${tenant.tenantId} and maturation_count >= 1`;
      return rows.length === SESSIONS.length ? rows : null;
    },
    { timeoutMs: 30_000, what: "every session matured" },
  );
  const res = await stack.platformRequest("/evaluators", {
    method: "POST",
    token: tenant.platformKey,
    body: JSON.stringify({
      service_name: SERVICE,
      name: "parallel-helpfulness",
      judge: {
        provider: "openai",
        url: JUDGE_URL,
        model: "judge-1",
        prompt: "Rate {{transcript}}.\n{{output_instructions}}",
      },
      output: { kind: "number", min: 0, max: 1 },
      api_key: "sk-test",
    }),
  });
  expect(res.status).toBe(201);
  const evaluator = (await res.json()) as { id: string };

  const recordedAt = new Map<string, number>();
  const deps = evaluationRunnerDeps(stack, {
    judgeConcurrency: 8,
    afterRecord: ({ entityId }) => {
      recordedAt.set(entityId, performance.now());
      if (recordedAt.size === SESSIONS.length - 1) othersRecorded();
    },
  });
  const batch: MaturedBatch = {
    type: "matured.batch",
    tenantId: tenant.tenantId,
    maturations: sessions.map((s) => ({
      type: "session.matured" as const,
      tenantId: tenant.tenantId,
      traceServiceId: s.trace_service_id,
      serviceName: SERVICE,
      entityPk: s.id,
      sessionId: s.session_id,
      maturationCount: s.maturation_count,
      occurredAt: new Date().toISOString(),
    })),
  };
  const msg = { info: { deliveryCount: 1 }, headers: undefined } as unknown as JsMsg;
  const outcome = await handleEvaluations(deps, createRunnerState(deps), { value: batch, msg });

  // The failing judgement asks for a retry of the message; everyone else's verdict is recorded.
  expect(outcome).toMatchObject({ retryInMs: expect.any(Number) });
  const rows = await stack.database.sql<{ entity_id: string; status: string; value: number }[]>`
    select entity_id, status, value from evaluations where evaluator_id = ${evaluator.id}`;
  expect(rows.map((r) => r.entity_id).sort()).toEqual(SESSIONS.filter((s) => s !== FAILING).sort());
  expect(rows.every((r) => r.status === "scored" && r.value === 0.7)).toBe(true);
  // Overlap: the judge had several calls in hand at once (the pool's bound of 8 at most) ...
  expect(peak).toBeGreaterThan(1);
  expect(peak).toBeLessThanOrEqual(8);
  // ... and the failing one held no one: every other verdict was recorded before it answered.
  const failedAt = answeredAt.get(FAILING)!;
  for (const s of SESSIONS.filter((x) => x !== FAILING)) expect(recordedAt.get(s)!).toBeLessThan(failedAt);
}, 90_000);
