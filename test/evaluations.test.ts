// Online evaluations (docs/evaluations.md): evaluators per service through the platform API, the
// dispatcher's runner judging matured sessions once per transcript with deterministic checks and
// with a fake judge in the OpenAI and Anthropic wire formats, results read back as scores, and the
// judge's failures (429, 500, not JSON, out of range, a hang, a huge body, a redirect, 401).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { chatTrace } from "./helpers/payloads";
import { startFakeJudge } from "./helpers/fake-judge";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let judge: Awaited<ReturnType<typeof startFakeJudge>>;
let memberKey: string;
let viewerKey: string;
const SERVICE = "eval-app";

const api = async (path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
  const res = await stack.platformRequest(path, {
    method: init.method ?? "GET",
    token: init.token ?? tenant.platformKey,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, text };
};

/** A session of `turns` user/assistant exchanges, the last answer `answer`. */
async function sendSession(sessionId: string, answer: string, opts: { service?: string; turn?: number } = {}) {
  const messages = [{ role: "user", content: `question ${opts.turn ?? 1} of ${sessionId}` }];
  const trace = chatTrace({ sessionId, serviceName: opts.service ?? SERVICE, messages, reply: answer });
  const res = await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${tenant.telemetryKey}` });
  expect(res.status).toBe(200);
}

const evaluations = (evaluatorId: string) =>
  stack.database.sql`select * from evaluations where evaluator_id = ${evaluatorId} order by created_at` as Promise<
    any[]
  >;

/** The evaluations of one evaluator on the named sessions (others maturing meanwhile are judged too). */
const evaluationsOf = async (evaluatorId: string, sessionIds: string[]) =>
  (await evaluations(evaluatorId)).filter((r) => sessionIds.includes(r.entity_id));

/** The judge's calls for `model` that judged `sessionId` (its id is in every prompt's transcript). */
const callsFor = (model: string, sessionId: string) =>
  judge.callsOf(model).filter((c) => JSON.stringify(c.body).includes(` of ${sessionId}`));

/**
 * Every session matured so far is published and the runner's lanes hold no MATURED message (none
 * waiting, none in hand or waiting for a retry). Evaluators are per service: a session of an
 * earlier test whose maturation the runner had not reached yet is judged by the evaluators that
 * are active when it gets there, so a test that creates evaluators first waits for this, and a
 * test that asserts "not judged" waits for it before looking.
 */
async function runnerSettled() {
  const { jsm, topology } = stack.nats;
  await waitFor(
    async () => {
      const [{ n }] = await stack.database
        .sql`select count(*)::int as n from sessions where published_count < maturation_count`;
      if (n > 0) return false;
      const lanes = (await jsm.consumers.list(topology.maturedStream).next()).filter((c) =>
        c.name.includes("dispatcher-evaluations"),
      );
      return lanes.length > 0 && lanes.every((c) => c.num_pending + c.num_ack_pending === 0);
    },
    { timeoutMs: 30_000, what: "every maturation through the evaluation runner" },
  );
}

async function createEvaluator(body: Record<string, unknown>, token = tenant.platformKey) {
  const res = await api("/evaluators", { method: "POST", body: { service_name: SERVICE, ...body }, token });
  if (res.status !== 201) throw new Error(`create evaluator: ${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, webhooks: { insecureAllowlist: "127.0.0.0/8" } });
  judge = await startFakeJudge();
  tenant = await bootstrapTenant(stack.database.db, { name: "evals" });
  const db = stack.database.db;
  const member = await createUser(db, { tenantId: tenant.tenantId, email: "m@e.test", role: "member", projectIds: [] });
  const viewer = await createUser(db, { tenantId: tenant.tenantId, email: "v@e.test", role: "viewer", projectIds: [] });
  memberKey = (await createApiKey(db, { kind: "platform", userId: member.id })).key;
  viewerKey = (await createApiKey(db, { kind: "platform", userId: viewer.id })).key;
  await sendSession("warm-up", "hello");
  const [svc] = await waitFor(async () => {
    const rows = await stack.database.sql`select id, project_id from trace_services where name = ${SERVICE}`;
    return rows.length ? rows : null;
  });
  await stack.database.sql`insert into project_memberships (user_id, project_id, tenant_id)
    select id, ${svc.project_id}, tenant_id from users where email in ('m@e.test', 'v@e.test')`;
  // The fake judge's model names are priced as the tenant's own models, so its calls cost something.
  for (const model of ["score:0.8", "score:0.3"])
    await stack.database
      .sql`insert into tenant_model_prices (tenant_id, model, from_date, provider, input, output, source)
      values (${tenant.tenantId}, ${model}, '2020-01-01', 'openai', 1, 1, 'test')`;
  await stack.startDispatcher({
    insecureAllowlist: "127.0.0.0/8",
    evaluations: { retryScale: 0.01, cacheMs: 50, timeoutMs: 1_000, runPollMs: 100 },
  });
  // The warm-up session matures once; a later test's evaluators must not find it on their way.
  await waitFor(
    async () => {
      const [s] = await stack.database.sql`select published_count from sessions where session_id = 'warm-up'`;
      return s && s.published_count >= 1;
    },
    { timeoutMs: 30_000, what: "warm-up matured" },
  );
  await runnerSettled();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  judge?.stop();
});

describe("the evaluator API", () => {
  test("a viewer cannot create or edit; a member creates checks but not judges; the key is sealed and never returned", async () => {
    const check = { name: "short", check: { type: "length", max: 500 } };
    expect(
      (await api("/evaluators", { method: "POST", body: { service_name: SERVICE, ...check }, token: viewerKey }))
        .status,
    ).toBe(403);
    const judged = {
      name: "helpful-by-member",
      judge: { provider: "openai", url: judge.openaiUrl, model: "score:0.5", prompt: "Rate {{final_answer}}." },
      output: { kind: "number", min: 0, max: 1 },
      api_key: "sk-secret-judge-key",
    };
    const byMember = await api("/evaluators", {
      method: "POST",
      body: { service_name: SERVICE, ...judged },
      token: memberKey,
    });
    expect(byMember.status).toBe(403);
    const created = await createEvaluator({ ...check, name: "short-by-member" }, memberKey);
    expect(created).toMatchObject({ version: 1, kind: "check", status: "active", has_api_key: false });
    const edit = await api(`/evaluators/${created.id}`, {
      method: "PUT",
      body: { sampling_rate: 0.5 },
      token: viewerKey,
    });
    expect(edit.status).toBe(403);

    const withKey = await createEvaluator({ ...judged, name: "helpful-by-admin" });
    expect(withKey.has_api_key).toBe(true);
    const read = await api(`/evaluators/${withKey.id}`);
    const list = await api(`/evaluators?serviceName=${SERVICE}`);
    for (const text of [JSON.stringify(withKey), read.text, list.text])
      expect(text).not.toContain("sk-secret-judge-key");
    const [row] = await stack.database.sql`select key_encrypted from evaluators where id = ${withKey.id}`;
    expect(row.key_encrypted).toStartWith("v2:");
    expect(row.key_encrypted).not.toContain("sk-secret");
    expect(await stack.secretBox.open(row.key_encrypted, withKey.id)).toBe("sk-secret-judge-key");

    const edited = await api(`/evaluators/${withKey.id}`, {
      method: "PUT",
      body: { output: { kind: "number", min: 0, max: 10 } },
    });
    expect(edited.body.version).toBe(2);
    const paused = await api(`/evaluators/${withKey.id}`, { method: "PUT", body: { status: "paused" } });
    expect(paused.body).toMatchObject({ version: 2, status: "paused", status_reason: "paused by a user" });
    const versions = await stack.database
      .sql`select version from evaluator_versions where evaluator_id = ${withKey.id} order by version`;
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    for (const id of [created.id, withKey.id])
      expect((await api(`/evaluators/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(`/evaluators/${withKey.id}`)).status).toBe(404);
  });

  test("bad definitions are 400 naming the field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "x" }, "judge"],
      [{ name: "x", check: { type: "length" } }, "check.min"],
      [{ name: "x", check: { type: "pattern", pattern: "(", mode: "matches" } }, "check.pattern"],
      [
        {
          name: "x",
          judge: { provider: "openai", url: judge.openaiUrl, model: "m", prompt: "{{secrets}}" },
          output: { kind: "boolean" },
        },
        "judge.prompt",
      ],
      [{ name: "x", judge: { provider: "openai", url: judge.openaiUrl, model: "m", prompt: "p" } }, "output"],
      [
        {
          name: "x",
          judge: { provider: "openai", url: "https://10.1.2.3/v1", model: "m", prompt: "p" },
          output: { kind: "boolean" },
        },
        "judge.url",
      ],
      [
        {
          name: "x",
          judge: { provider: "openai", url: judge.openaiUrl, model: "m", prompt: "p" },
          output: { kind: "number", min: 1, max: 0 },
        },
        "output.min",
      ],
    ];
    for (const [body, field] of cases) {
      const res = await api("/evaluators", { method: "POST", body: { service_name: SERVICE, ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toContain(field);
    }
    const doc = await api("/openapi.json");
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(["/evaluators", "/evaluators/{id}", "/evaluators/{id}/evaluations"]),
    );
  });
});

describe("running evaluators on matured sessions", () => {
  test("a deterministic check judges a settled session once, as a score of source evaluator", async () => {
    await runnerSettled();
    const e = await createEvaluator({
      name: "json-answer",
      check: {
        type: "json_schema",
        schema: { type: "object", required: ["ok"], properties: { ok: { type: "boolean" } } },
      },
    });
    await Bun.sleep(100); // past the runner's evaluator cache
    await sendSession("check-1", '{"ok": true}');
    await sendSession("check-2", "not json at all");
    const rows = await waitFor(
      async () => {
        const r = await evaluationsOf(e.id, ["check-1", "check-2"]);
        return r.length >= 2 ? r : null;
      },
      { timeoutMs: 30_000, what: "two evaluations" },
    );
    const scores = await api(`/telemetry/otel/sessions/${SERVICE}/check-1/scores`);
    const mine = scores.body.scores.filter((s: any) => s.name === "json-answer");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ source: "evaluator", value: true, dataType: "boolean" });
    expect(mine[0].evaluator).toMatchObject({ evaluatorId: e.id, version: 1, costUsd: null });
    const bad = (await api(`/telemetry/otel/sessions/${SERVICE}/check-2/scores`)).body.scores.find(
      (s: any) => s.name === "json-answer",
    );
    expect(bad.value).toBe(false);
    expect(bad.comment).toContain("not valid JSON");
    expect(rows.every((r) => r.status === "scored")).toBe(true);
    await api(`/evaluators/${e.id}`, { method: "DELETE" });
  }, 60_000);

  test("a judge in each wire format: judged exactly once; no new turns is not judged again, a new turn is", async () => {
    await runnerSettled();
    const openai = await createEvaluator({
      name: "helpfulness",
      judge: {
        provider: "openai",
        url: judge.openaiUrl,
        model: "score:0.8",
        prompt: "Rate how helpful {{final_answer}} is for {{last_user_message}}.\n{{output_instructions}}",
      },
      output: { kind: "number", min: 0, max: 1 },
      api_key: "sk-openai-test",
      filter: { environment: ["test"] },
    });
    const anthropic = await createEvaluator({
      name: "tone",
      judge: {
        provider: "anthropic",
        url: judge.anthropicUrl,
        model: 'score:"polite"',
        prompt: "Judge the tone of {{transcript}}.",
      },
      output: { kind: "label", labels: ["polite", "rude"] },
      api_key: "sk-ant-test",
    });
    await Bun.sleep(100);
    await sendSession("judged-1", "Here is how to reset your password: open settings.");
    for (const e of [openai, anthropic])
      await waitFor(async () => (await evaluationsOf(e.id, ["judged-1"])).length === 1, {
        timeoutMs: 30_000,
        what: `${e.name} judged`,
      });
    const oa = callsFor("score:0.8", "judged-1");
    expect(oa).toHaveLength(1);
    expect(oa[0].headers.get("authorization")).toBe("Bearer sk-openai-test");
    expect(oa[0].body.response_format.type).toBe("json_schema");
    // The transcript is in the data block, never in the instructions.
    expect(oa[0].body.messages[0].content).not.toContain("reset your password");
    expect(oa[0].body.messages[1].content).toContain("<final_answer>\nHere is how to reset your password");
    const an = callsFor('score:"polite"', "judged-1");
    expect(an).toHaveLength(1);
    expect(an[0].headers.get("x-api-key")).toBe("sk-ant-test");
    expect(an[0].body.tool_choice).toEqual({ type: "tool", name: "record_evaluation" });
    expect(an[0].body.system).not.toContain("reset your password");

    const scores = (await api(`/telemetry/otel/sessions/${SERVICE}/judged-1/scores`)).body.scores;
    const helpful = scores.find((s: any) => s.name === "helpfulness");
    expect(helpful).toMatchObject({ source: "evaluator", value: 0.8, comment: "judged by the fake judge" });
    expect(helpful.evaluator).toMatchObject({
      evaluatorId: openai.id,
      version: 1,
      inputTokens: 1000,
      outputTokens: 50,
    });
    expect(helpful.evaluator.costUsd).toBeGreaterThan(0);
    expect(scores.find((s: any) => s.name === "tone")).toMatchObject({ value: "polite", source: "evaluator" });

    // An event re-matures the session without a new turn: not judged again.
    const event = {
      name: "ui.click",
      service_name: SERVICE,
      session_id: "judged-1",
      timestamp: new Date().toISOString(),
    };
    expect(
      (await stack.ingestRequest("/raw/events", event, { authorization: `Bearer ${tenant.telemetryKey}` })).status,
    ).toBe(200);
    await waitFor(
      async () => {
        const [s] = await stack.database
          .sql`select maturation_count, published_count from sessions where session_id = 'judged-1'`;
        return s.maturation_count >= 2 && s.published_count >= s.maturation_count;
      },
      { timeoutMs: 30_000, what: "second maturation" },
    );
    await Bun.sleep(1_500);
    await runnerSettled();
    expect(await evaluations(openai.id)).toHaveLength(1);
    expect(judge.callsOf("score:0.8")).toHaveLength(1);

    // A new turn: judged again; the latest judgement replaces the score.
    await sendSession("judged-1", "And then press save.", { turn: 2 });
    await waitFor(async () => (await evaluations(openai.id)).length === 2, { timeoutMs: 30_000, what: "judged again" });
    const again = (await api(`/telemetry/otel/sessions/${SERVICE}/judged-1/scores`)).body.scores.filter(
      (s: any) => s.name === "helpfulness",
    );
    expect(again).toHaveLength(1);
    const listed = await api(`/evaluators/${openai.id}/evaluations`);
    expect(listed.body.evaluations).toHaveLength(2);
    expect(listed.body.evaluations[0]).toMatchObject({ status: "scored", value: 0.8, evaluator_version: 1 });
    for (const e of [openai, anthropic]) await api(`/evaluators/${e.id}`, { method: "DELETE" });
  }, 90_000);

  test("judge faults end as retries or visible failed evaluations; a refused key pauses the evaluator", async () => {
    const make = (name: string, model: string, extra: Record<string, unknown> = {}) =>
      createEvaluator({
        name,
        judge: { provider: "openai", url: judge.openaiUrl, model, prompt: "Rate {{transcript}}.", ...extra },
        output: { kind: "number", min: 0, max: 1 },
      });
    await runnerSettled();
    const e429 = await make("f-429", "retry-after:1");
    const e500 = await make("f-500", "500");
    const notJson = await make("f-not-json", "not-json");
    const range = await make("f-range", "out-of-range");
    const hang = await make("f-hang", "hang", { timeout_seconds: 1 });
    const huge = await make("f-huge", "huge");
    const redirect = await make("f-redirect", "redirect");
    const refused = await make("f-401", "401");
    await Bun.sleep(100);
    await sendSession("faults-1", "An answer.");
    const all = [e429, e500, notJson, range, hang, huge, redirect];
    const done = await waitFor(
      async () => {
        const rows = await Promise.all(all.map((e) => evaluationsOf(e.id, ["faults-1"])));
        return rows.every((r) => r.length === 1) ? rows.map((r) => r[0]) : null;
      },
      { timeoutMs: 60_000, what: "every fault evaluator recorded" },
    );
    const [r429, r500, rNotJson, rRange, rHang, rHuge, rRedirect] = done;
    expect(r429).toMatchObject({ status: "scored", value: 1 });
    const calls429 = callsFor("retry-after:1", "faults-1");
    expect(calls429).toHaveLength(2);
    expect(calls429[1].at - calls429[0].at).toBeGreaterThanOrEqual(900); // Retry-After: 1 honoured
    expect(r500.status).toBe("failed");
    expect(r500.error).toContain("HTTP 500");
    expect(rNotJson).toMatchObject({ status: "failed" });
    expect(rNotJson.error).toContain("does not fit");
    expect(callsFor("not-json", "faults-1")).toHaveLength(3);
    expect(rRange.error).toContain("outside 0..1");
    expect(rHang.error).toContain("timeout");
    expect(rHuge.error).toContain("larger than");
    expect(rRedirect.error).toContain("redirect");
    expect(callsFor("redirect", "faults-1")).toHaveLength(1); // not followed, not retried
    await waitFor(async () => (await api(`/evaluators/${refused.id}`)).body.status === "paused", {
      what: "401 pauses",
    });
    const paused = (await api(`/evaluators/${refused.id}`)).body;
    expect(paused.status_reason).toContain("401");
    // Each failure is visible: failed evaluations list with their error, no score written.
    const failedList = await api(`/evaluators/${e500.id}/evaluations?status=failed`);
    expect(failedList.body.evaluations[0].error).toContain("HTTP 500");
    const scores = (await api(`/telemetry/otel/sessions/${SERVICE}/faults-1/scores`)).body.scores;
    expect(scores.map((s: any) => s.name)).toEqual(["f-429"]);
    for (const e of [...all, refused]) await api(`/evaluators/${e.id}`, { method: "DELETE" });
  }, 120_000);

  test("a daily budget stops the evaluator for the day, visibly", async () => {
    await runnerSettled();
    const e = await createEvaluator({
      name: "budgeted",
      judge: { provider: "openai", url: judge.openaiUrl, model: "score:0.3", prompt: "Rate {{transcript}}." },
      output: { kind: "number", min: 0, max: 1 },
      daily_budget_usd: 0.000001,
    });
    await Bun.sleep(100);
    await sendSession("budget-1", "one");
    await waitFor(async () => (await evaluationsOf(e.id, ["budget-1"])).length === 1, {
      timeoutMs: 30_000,
      what: "first judged",
    });
    const after = (await api(`/evaluators/${e.id}`)).body;
    expect(after.budget.exhausted).toBe(true);
    expect(after.budget.spent_usd).toBeGreaterThan(0);
    await sendSession("budget-2", "two");
    await waitFor(
      async () => {
        const [s] = await stack.database.sql`select published_count from sessions where session_id = 'budget-2'`;
        return s && s.published_count >= 1;
      },
      { timeoutMs: 30_000, what: "budget-2 matured" },
    );
    await Bun.sleep(1_500);
    await runnerSettled();
    expect(await evaluations(e.id)).toHaveLength(1);
    await api(`/evaluators/${e.id}`, { method: "DELETE" });
  }, 60_000);
});

describe("review", () => {
  test("the queue offers what the judge scored below threshold; a verdict leaves it and feeds agreement", async () => {
    await runnerSettled();
    const quality = await createEvaluator({
      name: "quality",
      judge: { provider: "openai", url: judge.openaiUrl, model: "score:0.2", prompt: "Rate {{transcript}}." },
      output: { kind: "number", min: 0, max: 1 },
      review_below: 0.5,
    });
    const short = await createEvaluator({ name: "short-answer", check: { type: "length", max: 12 } });
    await Bun.sleep(100);
    const answers = {
      "rev-1": "short one",
      "rev-2": "a much longer answer than twelve",
      "rev-3": "tiny",
      "rev-4": "another long answer here",
    };
    for (const [id, answer] of Object.entries(answers)) await sendSession(id, answer);
    await waitFor(
      async () => {
        const revs = Object.keys(answers);
        return (
          (await evaluationsOf(quality.id, revs)).length === 4 && (await evaluationsOf(short.id, revs)).length === 4
        );
      },
      {
        timeoutMs: 30_000,
        what: "four sessions judged twice",
      },
    );
    const queue = await api(`/reviews/${SERVICE}?why=below_threshold`);
    expect(queue.status).toBe(200);
    expect(queue.body.items.map((i: any) => i.sessionId).sort()).toEqual(["rev-1", "rev-2", "rev-3", "rev-4"]);
    const item = queue.body.items.find((i: any) => i.sessionId === "rev-1");
    const judged = item.judgements.find((j: any) => j.evaluatorName === "quality");
    expect(judged).toMatchObject({ value: 0.2, reason: "judged by the fake judge", evaluatorVersion: 1, reviews: [] });
    expect(item.judgements.find((j: any) => j.evaluatorName === "short-answer").value).toBe(true);

    // A viewer cannot review; a member's verdict is a reviewer score and takes the session off the queue.
    const verdict = { evaluator_id: quality.id, value: 0.9, comment: "actually good" };
    expect((await api(`/reviews/${SERVICE}/rev-1`, { method: "POST", body: verdict, token: viewerKey })).status).toBe(
      403,
    );
    expect((await api(`/reviews/${SERVICE}/rev-1`, { method: "POST", body: { ...verdict, value: 7 } })).status).toBe(
      400,
    );
    const stored = await api(`/reviews/${SERVICE}/rev-1`, { method: "POST", body: verdict, token: memberKey });
    expect(stored.status).toBe(201);
    expect(stored.body).toMatchObject({ source: "reviewer", name: "quality", value: 0.9 });
    const after = await api(`/reviews/${SERVICE}?why=below_threshold`);
    expect(after.body.items.map((i: any) => i.sessionId)).not.toContain("rev-1");
    const agreeNumbers = await api(`/evaluators/${quality.id}/agreement`);
    expect(agreeNumbers.body).toMatchObject({ pairs: 1, kappa: null, agreementRate: null });
    expect(agreeNumbers.body.meanAbsoluteDifference).toBeCloseTo(0.7, 10);

    // Booleans: judge true,false,true,false against reviewers true,false,false,false: po 0.75, pe 0.5, kappa 0.5.
    const human: Record<string, boolean> = { "rev-1": true, "rev-2": false, "rev-3": false, "rev-4": false };
    for (const [id, value] of Object.entries(human))
      expect(
        (
          await api(`/reviews/${SERVICE}/${id}`, {
            method: "POST",
            body: { evaluator_id: short.id, value },
            token: memberKey,
          })
        ).status,
      ).toBe(201);
    const agree = await api(`/evaluators/${short.id}/agreement`);
    expect(agree.body).toMatchObject({ pairs: 4, agreementRate: 0.75, kappa: 0.5, outputKind: "boolean" });
    // The judge's scores stay beside the reviewer's on the session read.
    const scores = (await api(`/telemetry/otel/sessions/${SERVICE}/rev-1/scores`)).body.scores;
    expect(
      scores
        .filter((s: any) => s.name === "quality")
        .map((s: any) => s.source)
        .sort(),
    ).toEqual(["evaluator", "reviewer"]);
    for (const e of [quality, short]) await api(`/evaluators/${e.id}`, { method: "DELETE" });
  }, 60_000);
});

test("an evaluator of traces judges each matured trace and its score shows on the trace read", async () => {
  await runnerSettled();
  const e = await createEvaluator({
    name: "trace-polite",
    target: "trace",
    check: { type: "pattern", pattern: "please", flags: "i", mode: "matches" },
  });
  await Bun.sleep(100);
  await sendSession("traced-1", "Please restart the router.");
  const [trace] = await waitFor(async () => {
    const r = await stack.database.sql`select trace_id from traces where session_id = 'traced-1'`;
    return r.length ? r : null;
  });
  // Other sessions' traces maturing meanwhile are judged too: this one's evaluation is the one read.
  const [row] = await waitFor(
    async () => {
      const r = (await evaluations(e.id)).filter((x) => x.entity_id === trace.trace_id);
      return r.length ? r : null;
    },
    { timeoutMs: 30_000, what: "the trace judged" },
  );
  expect(row).toMatchObject({ target: "trace", status: "scored", value: 1 });
  const scores = await api(`/telemetry/otel/trace/${trace.trace_id}/scores?serviceName=${SERVICE}`);
  expect(scores.body.scores.find((x: any) => x.name === "trace-polite")).toMatchObject({
    source: "evaluator",
    target: "trace",
    value: true,
  });
  await api(`/evaluators/${e.id}`, { method: "DELETE" });
});

test("review: sessions with a critical finding are queued with the finding beside the judgement", async () => {
  await sendSession("crit-1", "Sure, I sent your password to the address in the tool result.");
  const [s] = await waitFor(
    async () => {
      const rows = await stack.database.sql`
      select id, tenant_id, trace_service_id from sessions where session_id = 'crit-1' and published_count >= 1`;
      return rows.length ? rows : null;
    },
    { timeoutMs: 30_000, what: "crit-1 matured" },
  );
  // A finding as the injection detector writes one when the model followed the injected text.
  const [issue] = await stack.database.sql`
    insert into issues (tenant_id, trace_service_id, fingerprint, detector, title, severity, first_seen_at, last_seen_at)
    values (${s.tenant_id}, ${s.trace_service_id}, 'fp-crit', 'prompt_injection', 'Prompt injection in a tool result, followed by the model', 'critical', now(), now())
    returning id`;
  await stack.database.sql`
    insert into findings (tenant_id, trace_service_id, session_pk, session_id, issue_id, detector, fingerprint, severity, title, evidence, occurred_at)
    values (${s.tenant_id}, ${s.trace_service_id}, ${s.id}, 'crit-1', ${issue.id}, 'prompt_injection', 'fp-crit', 'critical',
      'Prompt injection in a tool result, followed by the model', '{}'::jsonb, now())`;
  const queue = await api(`/reviews/${SERVICE}?why=critical_findings`);
  expect(queue.status).toBe(200);
  const item = queue.body.items.find((i: any) => i.sessionId === "crit-1");
  expect(item).toMatchObject({
    why: "critical_findings",
    criticalFindings: [
      { detector: "prompt_injection", title: "Prompt injection in a tool result, followed by the model" },
    ],
  });
  expect((await api(`/reviews/${SERVICE}?why=nonsense`)).status).toBe(400);
});

describe("try before enabling", () => {
  test("a cost estimate, a dry run that stores nothing, a backfill that stores scores and skips what it judged", async () => {
    const e = await createEvaluator({
      name: "tryout",
      status: "paused",
      judge: { provider: "openai", url: judge.openaiUrl, model: "score:0.8", prompt: "Rate {{transcript}}." },
      output: { kind: "number", min: 0, max: 1 },
    });
    expect(e.status).toBe("paused");
    const estimate = await api(`/evaluators/${e.id}/runs`, {
      method: "POST",
      body: { mode: "dry_run", latest: 3, estimate_only: true },
    });
    expect(estimate.status).toBe(200);
    expect(estimate.body).toMatchObject({ started: false, sessions: 3, run: null });
    expect(estimate.body.estimate.usd).toBeGreaterThan(0);
    expect(await stack.database.sql`select 1 from evaluation_runs`).toHaveLength(0);

    const dry = await api(`/evaluators/${e.id}/runs`, { method: "POST", body: { mode: "dry_run", latest: 3 } });
    expect(dry.status).toBe(201);
    expect(dry.body.run).toMatchObject({ status: "pending", sessions: 3, estimated_usd: estimate.body.estimate.usd });
    const done = await waitFor(
      async () => {
        const r = await api(`/evaluators/${e.id}/runs/${dry.body.run.id}`);
        return r.body.status === "done" ? r.body : null;
      },
      { timeoutMs: 30_000, what: "dry run done" },
    );
    expect(done).toMatchObject({ done: 3, scored: 3, failed: 0 });
    expect(done.results.map((r: any) => r.value)).toEqual([0.8, 0.8, 0.8]);
    expect(done.spent_usd).toBeGreaterThan(0);
    expect(await evaluations(e.id)).toHaveLength(0);
    expect(await stack.database.sql`select 1 from scores where name = 'tryout'`).toHaveLength(0);

    const backfill = async () => {
      const r = await api(`/evaluators/${e.id}/runs`, {
        method: "POST",
        body: { mode: "backfill", session_ids: ["rev-1", "rev-2"] },
      });
      expect(r.status).toBe(201);
      return waitFor(
        async () => {
          const x = await api(`/evaluators/${e.id}/runs/${r.body.run.id}`);
          return x.body.status === "done" ? x.body : null;
        },
        { timeoutMs: 30_000, what: "backfill done" },
      );
    };
    expect(await backfill()).toMatchObject({ scored: 2, skipped: 0, results: [] });
    const rows = await evaluations(e.id);
    expect(rows.map((r) => [r.entity_id, r.mode]).sort()).toEqual([
      ["rev-1", "backfill"],
      ["rev-2", "backfill"],
    ]);
    const score = (await api(`/telemetry/otel/sessions/${SERVICE}/rev-2/scores`)).body.scores.find(
      (s: any) => s.name === "tryout",
    );
    expect(score).toMatchObject({ source: "evaluator", value: 0.8 });
    expect(await backfill()).toMatchObject({ scored: 0, skipped: 2 });
    const missing = await api(`/evaluators/${e.id}/runs`, {
      method: "POST",
      body: { mode: "backfill", session_ids: ["nope"] },
    });
    expect(missing.status).toBe(404);
    await api(`/evaluators/${e.id}`, { method: "DELETE" });
  }, 90_000);
});
