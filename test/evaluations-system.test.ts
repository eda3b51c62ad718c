// Online evaluations with the four apps as separate processes (docs/evaluations.md) and a fake judge
// on 127.0.0.1 (allow-listed): a settled session is judged exactly once, its score, reason, version
// and judge cost read back through the platform, and a monitor on the evaluator's mean fires one
// signed monitor.triggered (checked with svix); the processor and the dispatcher killed while a
// judge call is in flight lose nothing and record one judgement; a tenant whose judge hangs does
// not hold up another tenant's evaluations or webhooks.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "svix";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { laneOf } from "@cellar/shared/nats/lanes";
import { DEFINITIONS_CACHE_MS } from "../apps/processor/src/monitors/consumer";
import { EVALUATORS_CACHE_MS } from "../apps/dispatcher/src/evaluations/runner";
import { startAppProcesses } from "./helpers/app-processes";
import { startFakeJudge } from "./helpers/fake-judge";
import { createTestDatabase } from "./helpers/infra";
import { startRecordingReceiver } from "./helpers/receiver";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";
import { platformClient } from "./helpers/platform-client";

const SERVICE = "judged-app";
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: Awaited<ReturnType<typeof startAppProcesses>>;
let judge: Awaited<ReturnType<typeof startFakeJudge>>;
let receiver: ReturnType<typeof startRecordingReceiver>;
type Tenant = Awaited<ReturnType<typeof bootstrapTenant>>;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 4 });
  judge = await startFakeJudge();
  receiver = startRecordingReceiver();
  stack = await startAppProcesses(testDb.url, ["ingest", "platform", "processor", "dispatcher"], {
    env: { EVALUATION_TIMEOUT_SECONDS: "3" },
  });
  a = await bootstrapTenant(database.db, { name: "judged", webhooks: true });
  // The second tenant on another MATURED lane than the first (lanes.ts), as most tenants are.
  for (let i = 0; ; i++) {
    b = await bootstrapTenant(database.db, { name: `hanging-${i}`, webhooks: true });
    if (laneOf(b.tenantId) !== laneOf(a.tenantId)) break;
  }
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  judge?.stop();
  receiver?.stop();
  await database?.close();
  await testDb?.drop();
});

const platform = (t: Tenant, path: string, method = "GET", body?: unknown) =>
  platformClient(stack.platformUrl, t.platformKey).call(path, method, body);
const session = async (t: Tenant, sessionId: string, answer = `Open settings and press reset (${sessionId}).`) => {
  const trace = chatTrace({
    sessionId,
    serviceName: SERVICE,
    messages: [{ role: "user", content: `help ${sessionId}` }],
    reply: answer,
  });
  const res = await fetch(`${stack.ingestUrl}/raw/traces`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify(trace),
  });
  expect(res.status).toBe(200);
};
const serviceOf = async (t: Tenant) => {
  await session(t, `warmup-${t.tenantId}`);
  const [svc] = await waitFor(async () => {
    const rows =
      await database.sql`select id from trace_services where name = ${SERVICE} and tenant_id = ${t.tenantId}`;
    return rows.length ? rows : null;
  });
  return svc.id as string;
};
const evaluationsOf = (evaluatorId: string, entityId?: string) =>
  database.sql`select * from evaluations where evaluator_id = ${evaluatorId}
    ${entityId ? database.sql`and entity_id = ${entityId}` : database.sql``} order by created_at` as Promise<any[]>;
const judgeCallsFor = (model: string, sessionId: string) =>
  judge.callsOf(model).filter((c) => JSON.stringify(c.body).includes(`(${sessionId})`));

test("judged once, read back as a score with its cost, and a monitor on the judge's mean fires one signed monitor.triggered", async () => {
  const svc = await serviceOf(a);
  await database.sql`insert into tenant_model_prices (tenant_id, model, from_date, provider, input, output, source)
    values (${a.tenantId}, 'score:0.2', '2020-01-01', 'openai', 2, 8, 'test')`;
  const hook = await platform(a, "/webhooks", "POST", {
    trace_service_id: svc,
    name: "monitors",
    url: `http://127.0.0.1:${receiver.port}/monitors`,
    event_types: ["monitor.triggered", "monitor.resolved"],
  });
  expect(hook.status).toBe(201);
  const monitor = await platform(a, "/monitors", "POST", {
    service_name: SERVICE,
    name: "helpfulness drops",
    metric: "score_mean",
    metric_arg: "helpfulness",
    window_seconds: 3600,
    direction: "below",
    threshold: 0.7,
  });
  expect(monitor.status).toBe(201);
  const evaluator = await platform(a, "/evaluators", "POST", {
    service_name: SERVICE,
    name: "helpfulness",
    judge: { provider: "openai", url: judge.openaiUrl, model: "score:0.2", prompt: "How helpful is {{final_answer}}?" },
    output: { kind: "number", min: 0, max: 1 },
    api_key: "sk-system-test",
  });
  expect(evaluator.status).toBe(201);
  await Bun.sleep(Math.max(DEFINITIONS_CACHE_MS, EVALUATORS_CACHE_MS) + 500);

  await session(a, "sys-1");
  const [row] = await waitFor(
    async () => {
      const rows = await evaluationsOf(evaluator.body.id, "sys-1");
      return rows.length ? rows : null;
    },
    { timeoutMs: 60_000, what: "sys-1 judged" },
  );
  expect(row.status).toBe("scored");
  const scores = await platform(a, `/telemetry/otel/sessions/${SERVICE}/sys-1/scores`);
  const score = scores.body.scores.find((s: any) => s.name === "helpfulness");
  expect(score).toMatchObject({ source: "evaluator", value: 0.2, comment: "judged by the fake judge" });
  expect(score.evaluator).toMatchObject({
    evaluatorId: evaluator.body.id,
    version: 1,
    inputTokens: 1000,
    outputTokens: 50,
  });
  expect(score.evaluator.costUsd).toBeCloseTo((1000 * 2 + 50 * 8) / 1e6, 10);

  const triggered = () =>
    receiver.received.filter((r) => r.path === "/monitors").map((r) => ({ ...r, event: JSON.parse(r.body) }));
  await waitFor(async () => triggered().length >= 1, { timeoutMs: 60_000, what: "monitor.triggered" });
  await Bun.sleep(2_000); // a second notification would have come by now
  const hooks = triggered();
  expect(hooks).toHaveLength(1);
  expect(hooks[0].event.type).toBe("monitor.triggered");
  expect(hooks[0].event.data).toMatchObject({ monitor_id: monitor.body.id, metric: "score_mean", value: 0.2 });
  const verified = new Webhook(hook.body.secret).verify(hooks[0].body, hooks[0].headers) as any;
  expect(verified.type).toBe("monitor.triggered");
  expect(judgeCallsFor("score:0.2", "sys-1")).toHaveLength(1);
  expect(await evaluationsOf(evaluator.body.id, "sys-1")).toHaveLength(1);
  await platform(a, `/evaluators/${evaluator.body.id}`, "DELETE");
}, 180_000);

test("the processor and the dispatcher killed while a judge call is in flight: nothing lost, one judgement", async () => {
  const slow = await platform(a, "/evaluators", "POST", {
    service_name: SERVICE,
    name: "slow-judge",
    judge: {
      provider: "anthropic",
      url: judge.anthropicUrl,
      model: "slow:2",
      prompt: "Judge {{transcript}}.",
      timeout_seconds: 10,
    },
    output: { kind: "number", min: 0, max: 1 },
  });
  expect(slow.status).toBe(201);
  await Bun.sleep(EVALUATORS_CACHE_MS + 500);
  await session(a, "crash-1");
  await waitFor(async () => judgeCallsFor("slow:2", "crash-1").length >= 1, {
    timeoutMs: 60_000,
    what: "judge call in flight",
  });
  await Promise.all([stack.kill("dispatcher"), stack.kill("processor")]);
  await session(a, "crash-2"); // accepted while both are down
  await stack.start("processor");
  await stack.start("dispatcher");
  for (const id of ["crash-1", "crash-2"])
    await waitFor(async () => (await evaluationsOf(slow.body.id, id)).length === 1, {
      timeoutMs: 120_000,
      what: `${id} judged after the restart`,
    });
  await Bun.sleep(3_000);
  for (const id of ["crash-1", "crash-2"]) {
    expect(await evaluationsOf(slow.body.id, id)).toHaveLength(1);
    const scores = (await platform(a, `/telemetry/otel/sessions/${SERVICE}/${id}/scores`)).body.scores;
    expect(scores.filter((s: any) => s.name === "slow-judge")).toHaveLength(1);
  }
  // The call the kill interrupted was made again; the judgement was recorded once.
  expect(judgeCallsFor("slow:2", "crash-1").length).toBeGreaterThanOrEqual(2);
  await platform(a, `/evaluators/${slow.body.id}`, "DELETE");
}, 240_000);

test("a tenant whose judge hangs does not hold up another tenant's evaluations or webhooks", async () => {
  const svcA = (
    await database.sql`select id from trace_services where name = ${SERVICE} and tenant_id = ${a.tenantId}`
  )[0].id;
  const svcB = await serviceOf(b);
  const matured = await platform(a, "/webhooks", "POST", {
    trace_service_id: svcA,
    name: "matured",
    url: `http://127.0.0.1:${receiver.port}/matured-a`,
    event_types: ["session.matured"],
  });
  expect(matured.status).toBe(201);
  expect(svcB).toBeTruthy();
  const fast = await platform(a, "/evaluators", "POST", {
    service_name: SERVICE,
    name: "fast",
    judge: { provider: "openai", url: judge.openaiUrl, model: "score:0.9", prompt: "Rate {{transcript}}." },
    output: { kind: "number", min: 0, max: 1 },
  });
  const hanging = await platform(b, "/evaluators", "POST", {
    service_name: SERVICE,
    name: "hanging",
    judge: { provider: "openai", url: judge.openaiUrl, model: "hang", prompt: "Rate {{transcript}}." },
    output: { kind: "number", min: 0, max: 1 },
  });
  expect([fast.status, hanging.status]).toEqual([201, 201]);
  await Bun.sleep(EVALUATORS_CACHE_MS + 500);

  // Baseline: A alone.
  const latency = async (ids: string[]) => {
    const rows = await database.sql`
      select ev.entity_id, extract(epoch from ev.created_at - s.matured_at) * 1000 as ms
      from evaluations ev join sessions s on s.session_id = ev.entity_id and s.tenant_id = ev.tenant_id
      where ev.evaluator_id = ${fast.body.id} and ev.entity_id = any(${ids}::text[])`;
    return rows.map((r) => Number(r.ms)).sort((x, y) => x - y);
  };
  const runA = async (prefix: string) => {
    const ids = Array.from({ length: 5 }, (_, i) => `${prefix}-${i}`);
    await Promise.all(ids.map((id) => session(a, id)));
    await waitFor(async () => (await latency(ids)).length === ids.length, {
      timeoutMs: 60_000,
      what: `${prefix} judged`,
    });
    await waitFor(
      async () =>
        ids.every((id) => receiver.received.some((r) => r.path === "/matured-a" && r.body.includes(`"${id}"`))),
      { timeoutMs: 60_000, what: `${prefix} webhooks` },
    );
    return latency(ids);
  };
  const alone = await runA("alone");
  // B floods its lane with conversations its judge never answers (each call times out at 3 s and is retried).
  await Promise.all(Array.from({ length: 30 }, (_, i) => session(b, `stuck-${i}`)));
  await waitFor(async () => judge.callsOf("hang").length >= 10, { timeoutMs: 60_000, what: "B's judge calls hanging" });
  const beside = await runA("beside");
  const p50 = (xs: number[]) => xs[Math.floor(xs.length / 2)];
  console.log(
    `maturation -> stored score, tenant A: p50 ${p50(alone).toFixed(0)} ms alone, ${p50(beside).toFixed(0)} ms beside tenant B's hanging judge (max ${alone.at(-1)!.toFixed(0)} / ${beside.at(-1)!.toFixed(0)} ms)`,
  );
  // A was judged while none of B's conversations had an answer yet: B's judge holds only B's lane.
  const bDone = await database.sql`select count(*)::int as n from evaluations where evaluator_id = ${hanging.body.id}`;
  expect(bDone[0].n).toBe(0);
  for (const e of [fast.body.id]) await platform(a, `/evaluators/${e}`, "DELETE");
  await platform(b, `/evaluators/${hanging.body.id}`, "DELETE");
}, 240_000);
