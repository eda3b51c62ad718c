// The evaluation runner under faults (issue 41), with the four apps as separate processes on a
// Postgres and a nats-server of this file's own (stopping them harms no other test) and a fake
// judge on 127.0.0.1: Postgres stopped while judge calls are in flight, NATS restarted while they
// are in flight, and a judge that hangs or answers garbage once. Each time every matured session
// is judged and recorded exactly once (one evaluation, one score), the judge is not asked again
// for a verdict it already gave, nothing is dead-lettered and no evaluation lane keeps a message.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type postgres from "postgres";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase } from "@cellar/shared/db/client";
import { consumersOf, evaluationsConsumer } from "@cellar/shared/nats/catalogue";
import { listDeadLetters } from "@cellar/shared/nats/dead-letters";
import { createTopology } from "@cellar/shared/nats/topology";
import { EVALUATORS_CACHE_MS } from "../apps/dispatcher/src/evaluations/runner";
import { startAppProcesses } from "./helpers/app-processes";
import { startFakeJudge } from "./helpers/fake-judge";
import { startOwnInfra } from "./helpers/own-infra";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";
import { platformClient } from "./helpers/platform-client";

let infra: Awaited<ReturnType<typeof startOwnInfra>>;
let sql: postgres.Sql;
let stack: Awaited<ReturnType<typeof startAppProcesses>>;
let judge: Awaited<ReturnType<typeof startFakeJudge>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  infra = await startOwnInfra("faults-evals");
  sql = infra.sql;
  judge = await startFakeJudge();
  stack = await startAppProcesses(infra.databaseUrl, ["ingest", "platform", "processor", "dispatcher"], {
    env: { NATS_URL: infra.natsUrl, EVALUATION_TIMEOUT_SECONDS: "2" },
  });
  const database = createDatabase(infra.databaseUrl, { max: 1 });
  tenant = await bootstrapTenant(database.db, { name: "faults", webhooks: true });
  await database.close();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  judge?.stop();
  await infra?.stop();
});

const platform = (path: string, method = "GET", body?: unknown) =>
  platformClient(stack.platformUrl, tenant.platformKey).call(path, method, body);
/** A one-trace session; retried while ingest answers 503 (NATS away), as an SDK would. */
const session = async (service: string, sessionId: string) => {
  const trace = chatTrace({
    sessionId,
    serviceName: service,
    messages: [{ role: "user", content: `help (${sessionId})` }],
    reply: `Press reset (${sessionId}).`,
  });
  await waitFor(
    async () => {
      const res = await fetch(`${stack.ingestUrl}/raw/traces`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
        body: JSON.stringify(trace),
      }).catch(() => null);
      return res?.status === 200;
    },
    { timeoutMs: 30_000, intervalMs: 500, what: `${sessionId} accepted` },
  );
};
/** A service with one judge evaluator on it (other tests' evaluators are on other services). */
const judged = async (service: string, model: string, timeoutSeconds?: number) => {
  await session(service, `${service}-warmup`);
  await waitFor(async () => (await sql`select 1 from trace_services where name = ${service}`).length > 0, {
    what: `${service} stored`,
  });
  const evaluator = await platform("/evaluators", "POST", {
    service_name: service,
    name: `${service}-judge`,
    judge: {
      provider: "openai",
      url: judge.openaiUrl,
      model,
      prompt: "Rate {{transcript}}.",
      ...(timeoutSeconds ? { timeout_seconds: timeoutSeconds } : {}),
    },
    output: { kind: "number", min: 0, max: 1 },
  });
  expect(evaluator.status).toBe(201);
  await Bun.sleep(EVALUATORS_CACHE_MS + 500);
  return evaluator.body.id as string;
};
const evaluationsOf = (evaluatorId: string, sessionId: string) =>
  sql`select status, value, attempts from evaluations where evaluator_id = ${evaluatorId} and entity_id = ${sessionId}`;
const scoresOf = (evaluatorId: string, sessionId: string) =>
  sql`select id from scores where evaluator_id = ${evaluatorId} and session_id = ${sessionId}`;
const callsFor = (model: string, sessionId: string) =>
  judge.callsOf(model).filter((c) => JSON.stringify(c.body).includes(`(${sessionId})`)).length;

/** Every session judged once, recorded once; nothing dead-lettered; no evaluation lane holds a message. */
async function expectEachJudgedOnce(service: string, evaluatorId: string, model: string, ids: string[]) {
  for (const id of ids)
    await waitFor(async () => (await evaluationsOf(evaluatorId, id).catch(() => [])).length >= 1, {
      timeoutMs: 120_000,
      what: `${id} judged`,
    }).catch(async (err) => {
      const [s] = await sql`select matured_at, maturation_count from sessions where session_id = ${id}`.catch(() => []);
      const all =
        await sql`select entity_id, status, attempts, created_at from evaluations where evaluator_id = ${evaluatorId}`.catch(
          (e) => [String(e)],
        );
      console.error(`evaluations so far: ${JSON.stringify(all)}`);
      console.error(
        `${id}: session ${JSON.stringify(s ?? null)}, judge calls ${callsFor(model, id)}\n--- dispatcher\n${stack.output("dispatcher").slice(-20000)}\n--- processor\n${stack.output("processor").slice(-4000)}`,
      );
      throw err;
    });
  const nc: NatsConnection = await connect({ servers: infra.natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const t = createTopology();
    await waitFor(
      async () => {
        let held = 0;
        for (const c of consumersOf(evaluationsConsumer, t)) {
          const info = await jsm.consumers.info(t.maturedStream, c.durable);
          held += info.num_pending + info.num_ack_pending;
        }
        return held === 0;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: "every evaluation lane empty" },
    );
    expect(await listDeadLetters(jsm, t)).toEqual([]);
  } finally {
    await nc.close();
  }
  await Bun.sleep(2_000); // a second judgement would have been recorded by now
  const seen: Record<string, { evaluations: number; status: string; calls: number }> = {};
  for (const id of ids) {
    const rows = await evaluationsOf(evaluatorId, id);
    seen[id] = { evaluations: rows.length, status: rows[0]?.status, calls: callsFor(model, id) };
  }
  console.log(`${service}: ${JSON.stringify(seen)}`);
  return seen;
}

test("Postgres stopped for 8 s while judge calls are in flight: every session judged once, the judge not asked twice", async () => {
  const model = "slow:2";
  const evaluatorId = await judged("pg-app", model, 20);
  const ids = Array.from({ length: 6 }, (_, i) => `pg-${i}`);
  for (const id of ids) await session("pg-app", id);
  await waitFor(async () => ids.some((id) => callsFor(model, id) > 0), { timeoutMs: 60_000, what: "a judge call" });
  await infra.pg.stop();
  const during = ["pg-during-0", "pg-during-1"];
  for (const id of during) await session("pg-app", id); // last-known keys: ingest keeps accepting
  await Bun.sleep(8_000);
  await infra.pg.start();
  const seen = await expectEachJudgedOnce("pg-app", evaluatorId, model, [...ids, ...during]);
  for (const [id, s] of Object.entries(seen)) {
    expect({ id, ...s }).toEqual({ id, evaluations: 1, status: "scored", calls: 1 });
    expect(await scoresOf(evaluatorId, id)).toHaveLength(1);
  }
}, 300_000);

test("NATS restarted while judge calls are in flight: every session judged once, the judge not asked twice", async () => {
  const model = "slow:3";
  const evaluatorId = await judged("nats-app", model, 20);
  const ids = Array.from({ length: 6 }, (_, i) => `nats-${i}`);
  for (const id of ids) await session("nats-app", id);
  await waitFor(async () => ids.some((id) => callsFor(model, id) > 0), { timeoutMs: 60_000, what: "a judge call" });
  await infra.restartNats(3_000);
  const after = ["nats-after-0", "nats-after-1"];
  for (const id of after) await session("nats-app", id);
  const seen = await expectEachJudgedOnce("nats-app", evaluatorId, model, [...ids, ...after]);
  for (const [id, s] of Object.entries(seen))
    expect({ id, ...s }).toEqual({ id, evaluations: 1, status: "scored", calls: 1 });
}, 300_000);

test("a judge that hangs or answers garbage once: asked again after its timeout or the garbage, judged once", async () => {
  const hang = await judged("hang-app", "hang-once:0.7");
  const garbage = await judged("garbage-app", "garbage-once:0.4");
  const hangIds = ["hang-0", "hang-1"];
  const garbageIds = ["garbage-0", "garbage-1"];
  for (const id of hangIds) await session("hang-app", id);
  for (const id of garbageIds) await session("garbage-app", id);
  const hung = await expectEachJudgedOnce("hang-app", hang, "hang-once:0.7", hangIds);
  const garbled = await expectEachJudgedOnce("garbage-app", garbage, "garbage-once:0.4", garbageIds);
  // The first call hung (timed out at 2 s) or answered garbage; the retry answered: two calls, one verdict.
  for (const [id, s] of Object.entries({ ...hung, ...garbled }))
    expect({ id, ...s }).toEqual({ id, evaluations: 1, status: "scored", calls: 2 });
}, 300_000);
