// Each maturation has one effect, however many MATURED messages carry it (issue 36). Session and
// trace maturations go out in batches; a republish (another processor's sweep racing the marker,
// a crash between publish and record) groups them differently from the first publisher's batch,
// so the stream can hold a maturation twice. Every consumer takes it once by its key: one webhook
// delivery, one rollup contribution, one monitor sample, one judgement (one judge call). Real
// nats-server and Postgres (the harness's), the real processor and dispatcher in-process, a
// receiver and a fake judge on 127.0.0.1.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { maturedStream, monitorsConsumer } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import type { MaturedMessage } from "@cellar/shared/payloads";
import type { Processor, ProcessorDeps } from "../apps/processor/src/processor";
import { maturedStreamMessages } from "../apps/processor/src/maturation/mature";
import { startFakeJudge } from "./helpers/fake-judge";
import { maturationsInStream } from "./helpers/matured-stream";
import { questionTrace } from "./helpers/payloads";
import { startRecordingReceiver } from "./helpers/receiver";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const SERVICE = "one-effect";
const JUDGE_MODEL = "slow:0.3";
const ALLOW = "127.0.0.0/8";
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let judge: Awaited<ReturnType<typeof startFakeJudge>>;
let receiver: ReturnType<typeof startRecordingReceiver>;
let processors: Processor[] = [];
let serviceId: string;
let evaluatorId: string;
let monitorId: string;

beforeAll(async () => {
  judge = await startFakeJudge();
  receiver = startRecordingReceiver({ delayMs: 400 });
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false, webhooks: { insecureAllowlist: ALLOW } });
  tenant = await bootstrapTenant(stack.database.db, { name: "one-effect", webhooks: true });
  // The service exists once a trace of it is written; then the four consumers' definitions.
  await startProcessors([{}]);
  await send("warmup");
  serviceId = await waitFor(async () => {
    const [row] = await stack.database.sql<{ id: string }[]>`
      select id from trace_services where tenant_id = ${tenant.tenantId} and name = ${SERVICE}`;
    return row?.id;
  });
  await waitFor(async () => (await sessionRows(["warmup"]))[0]?.published_count === 1, { what: "warmup published" });
  const create = async (path: string, body: Record<string, unknown>) => {
    const r = await stack.platformRequest(path, {
      method: "POST",
      token: tenant.platformKey,
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(201);
    return ((await r.json()) as { id: string }).id;
  };
  await create("/webhooks", {
    trace_service_id: serviceId,
    name: "matured",
    url: `http://127.0.0.1:${receiver.port}/matured`,
    event_types: ["session.matured", "trace.matured"],
  });
  // Every session samples 0 (no errors): one sample each, and the first one triggers.
  monitorId = await create("/monitors", {
    service_name: SERVICE,
    name: "no errors at all",
    metric: "error_rate",
    window_seconds: 3600,
    direction: "below",
    threshold: 0.5,
  });
  evaluatorId = await create("/evaluators", {
    service_name: SERVICE,
    name: "helpfulness",
    judge: { provider: "openai", url: judge.openaiUrl, model: JUDGE_MODEL, prompt: "How helpful is {{final_answer}}?" },
    output: { kind: "number", min: 0, max: 1 },
    api_key: "sk-one-effect",
  });
  // Started after the definitions: their caches hold them from the first maturation on.
  await stack.startDispatcher({ insecureAllowlist: ALLOW });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  judge?.stop();
  receiver?.stop();
});

async function startProcessors(each: Array<Partial<ProcessorDeps>>) {
  await Promise.all(processors.map((p) => p.stop()));
  processors = [];
  for (const overrides of each) processors.push(await stack.startProcessor(overrides));
}

const send = async (sessionId: string) => {
  const r = await stack.ingestRequest("/raw/traces", questionTrace(sessionId, SERVICE), {
    authorization: `Bearer ${tenant.telemetryKey}`,
  });
  expect(r.status).toBe(200);
};

type SessionRow = {
  id: string;
  session_id: string;
  tenant_id: string;
  trace_service_id: string;
  maturation_count: number;
  published_count: number;
  matured_at: Date | null;
};
const sessionRows = (ids: string[]) =>
  stack.database.sql<SessionRow[]>`
    select id, session_id, tenant_id, trace_service_id, maturation_count, published_count, matured_at
    from sessions where tenant_id = ${tenant.tenantId} and session_id = any(${ids}) order by session_id`;

const maturation = (r: SessionRow): MaturedMessage => ({
  type: "session.matured",
  tenantId: r.tenant_id,
  traceServiceId: r.trace_service_id,
  serviceName: SERVICE,
  entityPk: r.id,
  sessionId: r.session_id,
  maturationCount: r.maturation_count,
  occurredAt: r.matured_at!.toISOString(),
});
const publishGrouped = (groups: MaturedMessage[][]) =>
  Promise.all(
    groups
      .flatMap((group) => maturedStreamMessages(group))
      .map(({ message, msgID }) => publish(stack.nats.js, stack.nats.topology, maturedStream, message, { msgID })),
  );

/** What each of the sessions caused, by session id, and the overview's session count of the service. */
async function effects(ids: string[]) {
  const rows = await sessionRows(ids);
  const pks = rows.map((r) => r.id);
  const per = new Map(ids.map((id) => [id, { deliveries: 0, judgeCalls: 0, evaluations: 0, samples: 0, parts: 0 }]));
  for (const hit of receiver.received.filter((h) => h.path === "/matured")) {
    const event = JSON.parse(hit.body);
    if (event.type === "session.matured" && per.has(event.data.session_id))
      per.get(event.data.session_id)!.deliveries++;
  }
  for (const call of judge.callsOf(JUDGE_MODEL))
    for (const id of ids) if (JSON.stringify(call.body).includes(`answer <${id}>`)) per.get(id)!.judgeCalls++;
  const idOf = new Map(rows.map((r) => [r.id, r.session_id]));
  for (const e of await stack.database.sql<{ entity_id: string }[]>`
    select entity_id from evaluations where evaluator_id = ${evaluatorId} and entity_id = any(${ids})`)
    per.get(e.entity_id)!.evaluations++;
  for (const s of await stack.database.sql<{ entity_pk: string }[]>`
    select entity_pk from monitor_samples where monitor_id = ${monitorId} and entity_pk = any(${pks}::uuid[])`)
    per.get(idOf.get(s.entity_pk)!)!.samples++;
  for (const p of await stack.database.sql<{ session_pk: string }[]>`
    select session_pk from overview_session_parts where session_pk = any(${pks}::uuid[])`)
    per.get(idOf.get(p.session_pk)!)!.parts++;
  // One contribution each: the rollups count every matured session of the service once.
  const [{ rolled, matured }] = await stack.database.sql<{ rolled: number; matured: number }[]>`
    select (select coalesce(sum(sessions), 0)::int from overview_rollups
            where trace_service_id = ${serviceId} and bucket_seconds = 300 and model = '') as rolled,
           (select count(*)::int from sessions where trace_service_id = ${serviceId} and matured_at is not null) as matured`;
  return { per, rolled, matured };
}

const ONE = { deliveries: 1, judgeCalls: 1, evaluations: 1, samples: 1, parts: 1 };

/** Waits until every session has had each effect at least once, lets duplicates arrive, then checks exactly once. */
async function expectOneEffectEach(ids: string[]) {
  await waitFor(
    async () => {
      const { per, rolled, matured } = await effects(ids);
      return [...per.values()].every((e) => Object.values(e).every((n) => n >= 1)) && rolled >= matured;
    },
    { what: "every effect of every session", timeoutMs: 45_000, intervalMs: 250 },
  );
  await Bun.sleep(2_000); // the copies still in flight land meanwhile
  const { per, rolled, matured } = await effects(ids);
  for (const [id, e] of per) expect({ id, ...e }).toEqual({ id, ...ONE });
  expect(rolled).toBe(matured);
  // The monitor moved once: one triggered state change however many copies it evaluated.
  const [{ n }] = await stack.database.sql<{ n: number }[]>`
    select count(*)::int as n from monitor_events where monitor_id = ${monitorId}`;
  expect(n).toBe(1);
}

test("two batches carrying the same maturations, published at once, and the owed republish: one delivery, rollup contribution, monitor sample and judgement each", async () => {
  const ids = ["dup-0", "dup-1", "dup-2"];
  // Committed, then "crashed" before the MATURED publish: the maturations are owed.
  await startProcessors([
    {
      afterCommit: (m: MaturedMessage) => {
        if (m.type === "session.matured" && ids.includes(m.sessionId!)) throw new Error("simulated crash after commit");
      },
    },
  ]);
  for (const id of ids) await send(id);
  const rows = await waitFor(
    async () => {
      const r = await sessionRows(ids);
      return r.length === ids.length && r.every((x) => x.maturation_count === 1 && x.published_count === 0) && r;
    },
    { what: "three maturations committed, unpublished", timeoutMs: 20_000 },
  );
  const [d0, d1, d2] = rows.map(maturation);
  // Two groupings of dup-1, side by side: two messages the stream keeps (their ids differ).
  await publishGrouped([
    [d0, d1],
    [d1, d2],
  ]);
  // The restarted processor finds them matured and owed, and publishes all three in a third batch.
  await startProcessors([{}]);
  await waitFor(async () => (await sessionRows(ids)).every((r) => r.published_count === 1), {
    what: "the owed publish",
    timeoutMs: 20_000,
  });
  const carried = (await maturationsInStream(stack)).filter((m) => ids.includes(m.sessionId ?? ""));
  const copies = (id: string) => carried.filter((m) => m.sessionId === id).length;
  // Mine, and the owed republish (one message per marker, or a batch of them: as their markers come).
  expect(copies("dup-0")).toBeGreaterThanOrEqual(2);
  expect(copies("dup-1")).toBeGreaterThanOrEqual(3);
  expect(copies("dup-2")).toBeGreaterThanOrEqual(2);
  expect(carried.every((m) => m.maturationCount === 1)).toBe(true);
  await expectOneEffectEach(ids);
}, 90_000);

test("two processors with racing sweeps and markers: each maturation has one effect", async () => {
  await startProcessors([
    { sweepIntervalMs: 150, sweepGraceSeconds: 0 },
    { sweepIntervalMs: 150, sweepGraceSeconds: 0 },
  ]);
  const ids = Array.from({ length: 30 }, (_, i) => `race-${i}`);
  await Promise.all(ids.map(send));
  await waitFor(async () => (await sessionRows(ids)).filter((r) => r.published_count === 1).length === ids.length, {
    what: "all race sessions published",
    timeoutMs: 30_000,
  });
  const carried = (await maturationsInStream(stack)).filter(
    (m) => m.type === "session.matured" && ids.includes(m.sessionId ?? ""),
  );
  // Each matured once (count 1, one maturation time), published once or more.
  expect(new Set(carried.map((m) => m.sessionId)).size).toBe(ids.length);
  expect(carried.every((m) => m.maturationCount === 1)).toBe(true);
  for (const id of ids)
    expect(new Set(carried.filter((m) => m.sessionId === id).map((m) => m.occurredAt)).size).toBe(1);
  console.info(`racing publishers: ${carried.length} copies of ${ids.length} maturations in the stream`);
  await expectOneEffectEach(ids);
  await startProcessors([]);
}, 90_000);

test("a copy of an older maturation arriving after a newer one changes nothing: the newer one's sample, contribution and judgement stay", async () => {
  await startProcessors([{}]);
  const published = (count: number) =>
    waitFor(
      async () => {
        const [r] = await sessionRows(["older-1"]);
        return r?.published_count === count && r;
      },
      { what: `older-1 #${count} published`, timeoutMs: 20_000 },
    );
  await send("older-1");
  const first = await published(1);
  await send("older-1"); // re-opens it: #2, with a new turn (a new transcript to judge)
  const second = await published(2);
  const sampleAt = async () =>
    (
      await stack.database.sql<{ at: Date }[]>`
        select at from monitor_samples where monitor_id = ${monitorId} and entity_pk = ${second.id}`
    )[0]?.at.getTime();
  await waitFor(async () => (await sampleAt()) === second.matured_at!.getTime(), { what: "#2 sampled" });
  const before = await waitFor(
    async () => {
      const e = (await effects(["older-1"])).per.get("older-1")!;
      return e.deliveries === 2 && e.evaluations === 2 && e;
    },
    { what: "both maturations delivered and judged" },
  );
  // #1 again, grouped with another session's maturation: a batch id the stream has not seen.
  const [other] = await sessionRows(["dup-0"]);
  await publishGrouped([[maturation(first), maturation(other)]]);
  await waitFor(
    async () => {
      const c = await stack.nats.jsm.consumers.info(
        stack.nats.topology.maturedStream,
        monitorsConsumer.consumer!.durable,
      );
      return c.num_pending + c.num_ack_pending === 0;
    },
    { what: "the copy read by the monitors" },
  );
  await Bun.sleep(1_500);
  expect(await sampleAt()).toBe(second.matured_at!.getTime());
  // Two maturations, two of each (the rollups hold #2's contribution once), before and after the copy.
  expect(before).toEqual({ deliveries: 2, judgeCalls: 2, evaluations: 2, samples: 1, parts: 1 });
  expect((await effects(["older-1"])).per.get("older-1")).toEqual(before);
  const { rolled, matured } = await effects(["older-1"]);
  expect(rolled).toBe(matured);
}, 60_000);
