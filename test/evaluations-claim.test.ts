// One judge call per judgement across dispatcher processes (docs/evaluations.md "One judge call
// per judgement"). A maturation can reach MATURED twice (a republish groups it into another
// batch); two dispatcher processes judging the two copies at once each called the model: the
// evaluation was recorded once, the provider billed twice. Real Postgres and NATS (the harness's),
// the session ingested and matured by the real processor, a fake judge on 127.0.0.1 counting its
// calls; two runner states stand for two processes (each with its own in-process sharing), their
// handler called with two batch messages carrying the same maturation.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { JsMsg } from "@nats-io/jetstream";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { claimJudgement, recordEvaluation } from "@cellar/shared/evaluations/store";
import type { MaturedBatch, MaturedMessage } from "@cellar/shared/payloads";
import {
  createRunnerState,
  handleEvaluations,
  type EvaluationRunnerDeps,
} from "../apps/dispatcher/src/evaluations/runner";
import { evaluationRunnerDeps } from "./helpers/evaluation-runner";
import { startFakeJudge } from "./helpers/fake-judge";
import { questionTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const SERVICE = "claimed-judgements";
const MODEL = "slow:1";
const CLAIM_MS = 2_500;
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let judge: Awaited<ReturnType<typeof startFakeJudge>>;
let evaluator: { id: string; version: number };
let deps: EvaluationRunnerDeps;

beforeAll(async () => {
  judge = await startFakeJudge();
  stack = await createTestStack({ windowSeconds: 1, webhooks: { insecureAllowlist: "127.0.0.0/8" } });
  tenant = await bootstrapTenant(stack.database.db, { name: "claimed-evals" });
  deps = evaluationRunnerDeps(stack, { claimMs: CLAIM_MS });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  judge?.stop();
});

/** Ingests one session, waits for its maturation, and returns it as MATURED carries it. */
async function maturedSession(sessionId: string): Promise<MaturedMessage> {
  const res = await stack.ingestRequest("/raw/traces", questionTrace(sessionId, SERVICE), {
    authorization: `Bearer ${tenant.telemetryKey}`,
  });
  expect(res.status).toBe(200);
  const s = await waitFor(
    async () => {
      const [row] = await stack.database.sql<
        { id: string; session_id: string; trace_service_id: string; maturation_count: number }[]
      >`select id, session_id, trace_service_id, maturation_count from sessions
        where tenant_id = ${tenant.tenantId} and session_id = ${sessionId} and maturation_count >= 1`;
      return row;
    },
    { timeoutMs: 30_000, what: `${sessionId} matured` },
  );
  return {
    type: "session.matured",
    tenantId: tenant.tenantId,
    traceServiceId: s.trace_service_id,
    serviceName: SERVICE,
    entityPk: s.id,
    sessionId: s.session_id,
    maturationCount: s.maturation_count,
    occurredAt: new Date().toISOString(),
  };
}

async function ensureEvaluator() {
  if (evaluator) return;
  const res = await stack.platformRequest("/evaluators", {
    method: "POST",
    token: tenant.platformKey,
    body: JSON.stringify({
      service_name: SERVICE,
      name: "claimed-helpfulness",
      judge: { provider: "openai", url: judge.openaiUrl, model: MODEL, prompt: "How helpful is {{final_answer}}?" },
      output: { kind: "number", min: 0, max: 1 },
      api_key: "sk-claims",
    }),
  });
  expect(res.status).toBe(201);
  evaluator = (await res.json()) as { id: string; version: number };
}

const batchOf = (m: MaturedMessage, other?: MaturedMessage): MaturedBatch => ({
  type: "matured.batch",
  tenantId: tenant.tenantId,
  maturations: other ? [m, other] : [m],
});
const msg = (deliveryCount: number) => ({ info: { deliveryCount }, headers: undefined }) as unknown as JsMsg;
const callsFor = (sessionId: string) =>
  judge.callsOf(MODEL).filter((c) => JSON.stringify(c.body).includes(`answer <${sessionId}>`)).length;
const evaluationsOf = async (sessionId: string) =>
  (
    await stack.database.sql<{ status: string; value: number }[]>`
      select status, value from evaluations where evaluator_id = ${evaluator.id} and entity_id = ${sessionId}`
  ).map((r) => ({ status: r.status, value: r.value }));

test("two processes judging two copies of one maturation at once call the judge once; the refused copy comes back and finds it judged", async () => {
  const warm = await maturedSession("claim-warm");
  await ensureEvaluator();
  const m = await maturedSession("claim-dup");
  // Two processes, each with its own in-process sharing of a run, each handed a batch carrying m.
  const [a, b] = [createRunnerState(deps), createRunnerState(deps)];
  const before = Date.now();
  const outcomes = await Promise.all([
    handleEvaluations(deps, a, { value: batchOf(m), msg: msg(1) }),
    handleEvaluations(deps, b, { value: batchOf(m, warm), msg: msg(1) }),
  ]);
  const after = Date.now();
  expect(callsFor("claim-dup")).toBe(1);
  expect(await evaluationsOf("claim-dup")).toEqual([{ status: "scored", value: 0.5 }]);
  // The copy refused the claim asks to come back within the claim's length, and then finds it judged.
  const refused = outcomes.filter((o) => o !== "ack") as Array<{ retryInMs: number }>;
  expect(refused).toHaveLength(1);
  expect(refused[0].retryInMs).toBeGreaterThan(0);
  // The holder's claim ends CLAIM_MS after its own clock read; the refused copy counts from its
  // read, which may come first (each process reads the time before its claim statement runs).
  expect(refused[0].retryInMs).toBeLessThanOrEqual(CLAIM_MS + (after - before));
  const again = await handleEvaluations(deps, createRunnerState(deps), { value: batchOf(m), msg: msg(2) });
  expect(again).toBe("ack");
  expect(callsFor("claim-dup")).toBe(1);
  expect(await evaluationsOf("claim-dup")).toHaveLength(1);
}, 90_000);

test("a process that died holding a claim: the redelivered maturation is judged once, after the claim ends", async () => {
  await ensureEvaluator();
  const m2 = await maturedSession("claim-crash-2");
  // The dead process: it claimed the judgement and called the judge, which never answered
  // before it died (a judge that hangs; the claim shorter than the call's deadline).
  const dying: EvaluationRunnerDeps = {
    ...deps,
    judge: { ...deps.judge, fetch: () => new Promise<Response>(() => {}) },
  };
  const dead = handleEvaluations(dying, createRunnerState(dying), { value: batchOf(m2), msg: msg(1) });
  void dead.catch(() => {});
  const claimedUntil = await waitFor(
    async () => {
      const [c] = await stack.database.sql<{ claimed_until: Date }[]>`
        select claimed_until from evaluation_claims where evaluator_id = ${evaluator.id} and entity_id = 'claim-crash-2'`;
      return c?.claimed_until;
    },
    { what: "the dead process's claim" },
  );
  // The redelivered copy on a live process: refused while the claim lasts, no judge call.
  const refused = await handleEvaluations(deps, createRunnerState(deps), { value: batchOf(m2), msg: msg(2) });
  expect(refused).toMatchObject({ retryInMs: expect.any(Number) });
  expect(callsFor("claim-crash-2")).toBe(0);
  await Bun.sleep(Math.max(0, claimedUntil.getTime() + 100 - Date.now()));
  // Back after the claim ended: judged, once.
  expect(await handleEvaluations(deps, createRunnerState(deps), { value: batchOf(m2), msg: msg(3) })).toBe("ack");
  expect(callsFor("claim-crash-2")).toBe(1);
  expect(await evaluationsOf("claim-crash-2")).toEqual([{ status: "scored", value: 0.5 }]);
  // A late copy finds the judgement recorded: no call.
  expect(await handleEvaluations(deps, createRunnerState(deps), { value: batchOf(m2), msg: msg(1) })).toBe("ack");
  expect(callsFor("claim-crash-2")).toBe(1);
}, 90_000);

test("claimJudgement: claimed, held until the other's end, free once that has passed, judged once recorded", async () => {
  await ensureEvaluator();
  const key = {
    tenantId: tenant.tenantId,
    traceServiceId: (await stack.database.sql`select trace_service_id from evaluators where id = ${evaluator.id}`)[0]
      .trace_service_id as string,
    evaluatorId: evaluator.id,
    evaluatorVersion: evaluator.version,
    target: "session" as const,
    entityId: "claim-unit",
    transcriptHash: "hash-of-claim-unit",
  };
  const t0 = new Date();
  const at = (ms: number) => new Date(t0.getTime() + ms);
  expect(await claimJudgement(stack.database.sql, key, at(1_000), t0)).toEqual({ kind: "claimed" });
  expect(await claimJudgement(stack.database.sql, key, at(2_000), at(500))).toEqual({ kind: "held", until: at(1_000) });
  expect(await claimJudgement(stack.database.sql, key, at(3_000), at(1_000))).toEqual({ kind: "claimed" });
  // Recorded (by whoever holds it): judged for good, even past the claim's end.
  await recordEvaluation(
    stack.database.sql,
    key,
    {
      status: "failed",
      value: null,
      reason: null,
      error: "the judge answered 500",
      injectionFlagged: false,
      attempts: 1,
      inputTokens: null,
      outputTokens: null,
      costUsd: null,
      durationMs: 1,
      maturationCount: 1,
      mode: "live",
      scoreName: "claimed-helpfulness",
      environment: null,
    },
    at(1_500),
  );
  expect(await claimJudgement(stack.database.sql, key, at(9_000), at(5_000))).toEqual({ kind: "judged" });
  const [c] = await stack.database.sql<{ claimed_until: unknown }[]>`
    select claimed_until from evaluation_claims where evaluator_id = ${evaluator.id} and entity_id = 'claim-unit'`;
  expect(String(c.claimed_until)).toMatch(/Invalid|infinity/i);
}, 30_000);
