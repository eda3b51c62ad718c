/**
 * Fair webhook delivery across tenants (docs/webhooks.md, Fairness): tenant lanes on MATURED and
 * DELIVERIES. Real nats-server and Postgres; receivers are a scripted fetch (no network).
 * Assertions are orderings and counts, never milliseconds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { consumersOf, deliveriesStream, maturedStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import { maturationKey, type MaturedMessage } from "@cellar/shared/payloads";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { DL, replayDeadLetter } from "@cellar/shared/nats/dead-letters";
import { ensureTopology } from "@cellar/shared/nats/topology";
import { stubDns } from "./helpers/dns";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { dispatcherSlot, webhookApi } from "./helpers/webhooks";

const resolveDns = stubDns();
let stack: TestStack;
let req: ReturnType<typeof webhookApi>;

type Tenant = Awaited<ReturnType<typeof bootstrapTenant>> & { serviceId: string; serviceName: string };
/** Receivers by host: what each answers. Default 204. */
const answer: Record<string, (path: string) => Response | Promise<Response>> = {};
const hits: Array<{ host: string; path: string; body: string }> = [];

const dispatchers = dispatcherSlot(() => stack, {
  resolveDns,
  fetch: async (url, init) => {
    const u = new URL(url);
    hits.push({ host: u.hostname, path: u.pathname, body: String(init?.body ?? "") });
    return (await answer[u.hostname]?.(u.pathname)) ?? new Response(null, { status: 204 });
  },
});
const startDispatcher = dispatchers.start;

let n = 0;
async function tenant(name: string): Promise<Tenant> {
  const t = await bootstrapTenant(stack.database.db, {
    name: `${name}-${++n}`,
    webhooks: true,
    email: `${name}${n}@lanes.test`,
  });
  const serviceName = `svc-${name}-${n}`;
  const serviceId = (await createService(stack.database.db, { tenantId: t.tenantId, name: serviceName })).id;
  return { ...t, serviceId, serviceName };
}
const earlier: Tenant[] = [];
/** A tenant whose lane no earlier tenant of this file has (1 in 16 share one; at most 30 tries). */
async function tenantBeside(name: string): Promise<Tenant> {
  let t = await tenant(name);
  for (let i = 0; i < 30 && earlier.some((o) => subjectOf(o) === subjectOf(t)); i++) t = await tenant(name);
  earlier.push(t);
  return t;
}
const subjectOf = (t: Tenant) => maturedStream.subjectOf!(stack.nats.topology, matured(t));

async function subscribe(t: Tenant, host: string, path = "/hook") {
  const res = await req("/webhooks", t.platformKey, "POST", {
    trace_service_id: t.serviceId,
    name: `${host}${path}`,
    url: `https://${host}${path}`,
    event_types: ["session.matured"],
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}
function matured(t: Tenant): MaturedMessage {
  return {
    type: "session.matured",
    tenantId: t.tenantId,
    traceServiceId: t.serviceId,
    serviceName: t.serviceName,
    entityPk: crypto.randomUUID(),
    sessionId: `s-${crypto.randomUUID()}`,
    maturationCount: 1,
    occurredAt: new Date().toISOString(),
  };
}
const rows = async (t: Tenant) =>
  Number(
    (await stack.database.sql`select count(*)::int as n from webhook_deliveries where tenant_id = ${t.tenantId}`)[0].n,
  );

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  req = webhookApi(stack, { resolveDns });
});
afterAll(async () => {
  await dispatchers.stop();
  await stack.stop();
});

describe("tenant lanes", () => {
  test("MATURED: a tenant's event is fanned out and attempted before another tenant's earlier backlog is drained", async () => {
    await dispatchers.stop();
    const a = await tenantBeside("flood");
    const b = await tenantBeside("bystander");
    await subscribe(a, "a-dead.example.com");
    await subscribe(b, "b-live.example.com");
    answer["a-dead.example.com"] = () => new Response("down", { status: 503 });
    // When B's receiver is hit, how many of A's deliveries exist: A's backlog fanned out so far.
    let aRowsWhenBAttempted = -1;
    answer["b-live.example.com"] = async () => {
      aRowsWhenBAttempted = await rows(a);
      return new Response(null, { status: 204 });
    };

    // A's backlog first, then B's one event, all before the dispatcher starts.
    const BACKLOG = 3000;
    for (let i = 0; i < BACKLOG; i += 500) {
      await Promise.all(
        Array.from({ length: 500 }, () => {
          const m = matured(a);
          return publish(stack.nats.js, stack.nats.topology, maturedStream, m, { msgID: maturationKey(m) });
        }),
      );
    }
    const mb = matured(b);
    await publish(stack.nats.js, stack.nats.topology, maturedStream, mb, { msgID: maturationKey(mb) });
    await startDispatcher();

    await waitFor(async () => aRowsWhenBAttempted >= 0, { what: "B's delivery attempted", timeoutMs: 60_000 });
    // One FIFO with 1,000 messages in flight reaches B's event only after at least
    // BACKLOG - 999 of A's are done; in its own lane B waits for none of them.
    expect(aRowsWhenBAttempted).toBeLessThan(BACKLOG - 1000);
    await waitFor(async () => (await rows(a)) === BACKLOG, {
      what: "A's backlog fanned out in the end",
      timeoutMs: 60_000,
    });
    expect(hits.filter((h) => h.host === "b-live.example.com")).toHaveLength(1);
  }, 120_000);

  test("DELIVERIES: one tenant's retries waiting out their delay cannot hold another tenant's retries back", async () => {
    await dispatchers.stop();
    const { jsm, topology } = stack.nats;
    await jsm.streams.purge(topology.deliveriesStream); // the first test's retry jobs
    const a = await tenantBeside("waiting");
    const b = await tenantBeside("retrying");
    await subscribe(a, "a-busy.example.com");
    await subscribe(b, "b-flaky.example.com");
    // A's receiver asks for an hour: each of A's retry jobs holds an ack-pending slot that long.
    answer["a-busy.example.com"] = () => new Response("later", { status: 429, headers: { "retry-after": "3600" } });
    // B's fails once, then answers.
    let bCalls = 0;
    answer["b-flaky.example.com"] = () => new Response(null, { status: ++bCalls === 1 ? 500 : 204 });
    // Every DELIVERIES consumer gets 5 slots instead of 12,500 (a lane) or 200,000 (one consumer).
    const SLOTS = 5;
    for (const c of await jsm.consumers.list(topology.deliveriesStream).next()) {
      await jsm.consumers.update(topology.deliveriesStream, c.name, { max_ack_pending: SLOTS });
    }
    await startDispatcher({ retryTimeScale: 0.0001 });
    // A: twice as many waiting retries as the slots.
    for (let i = 0; i < SLOTS * 2; i++) {
      const m = matured(a);
      await publish(stack.nats.js, stack.nats.topology, maturedStream, m, { msgID: maturationKey(m) });
    }
    await waitFor(async () => hits.filter((h) => h.host === "a-busy.example.com").length === SLOTS * 2, {
      what: "A's first attempts",
    });
    const aWaiting = async () => {
      let held = 0;
      for (const c of await jsm.consumers.list(topology.deliveriesStream).next()) held += c.num_ack_pending;
      return held;
    };
    await waitFor(async () => (await aWaiting()) === SLOTS, { what: "A's retries fill their slots" });

    // B's first attempt fails; its retry (due at once on the scaled curve) must still run.
    const mb = matured(b);
    await publish(stack.nats.js, stack.nats.topology, maturedStream, mb, { msgID: maturationKey(mb) });
    await waitFor(async () => bCalls === 2, { what: "B's retry attempted while A's retries wait", timeoutMs: 15_000 });
    // The call counter moves inside the receiver, before the dispatcher records the outcome.
    const delivery = await waitFor(
      async () => {
        const [d] = await stack.database
          .sql`select status, attempts from webhook_deliveries where tenant_id = ${b.tenantId}`;
        return d?.status === "delivered" && d;
      },
      { what: "B's delivery recorded" },
    );
    expect(delivery).toEqual({ status: "delivered", attempts: 2 });
    // A's retries are all still waiting: nothing of A's was attempted a second time.
    expect(hits.filter((h) => h.host === "a-busy.example.com")).toHaveLength(SLOTS * 2);
    for (const c of consumersOf(deliveriesStream, topology)) {
      await jsm.consumers.update(topology.deliveriesStream, c.durable, { max_ack_pending: c.maxAckPending });
    }
  }, 60_000);
});

describe("upgrade from the single consumers", () => {
  test("messages on the old subjects are delivered once, handled ones are not replayed, and the old consumers are drained and deleted", async () => {
    await dispatchers.stop();
    const { js, jsm, nc, topology } = stack.nats;
    const p = topology.subjectPrefix;
    // The old consumer had handled everything before (the earlier tests' messages): start empty.
    await jsm.streams.purge(topology.maturedStream);
    await jsm.streams.purge(topology.deliveriesStream);
    const t = await tenantBeside("upgrading");
    const sub = await subscribe(t, "upgrade.example.com");
    // The topology before lanes: one consumer per stream, no filter, as main created them.
    for (const [stream, durable] of [
      [topology.maturedStream, "dispatcher-matured"],
      [topology.deliveriesStream, "dispatcher-deliveries"],
    ]) {
      await jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: 30e9,
        max_deliver: -1,
        max_ack_pending: 1000,
      });
    }
    const old = (m: MaturedMessage) =>
      js.publish(`${p}matured.session`, JSON.stringify(m), { msgID: maturationKey(m) });
    // m0 was handled by the old dispatcher (acked); m1 and m2 were not yet.
    const [m0, m1, m2] = [matured(t), matured(t), matured(t)];
    await old(m0);
    const legacy = await js.consumers.get(topology.maturedStream, "dispatcher-matured");
    const first = await legacy.next({ expires: 2000 });
    expect(first?.json<MaturedMessage>().sessionId).toBe(m0.sessionId);
    await first!.ackAck();
    await old(m1);
    await old(m2);
    // A retry job of the old dispatcher (no tenant in it), due now.
    const body = JSON.stringify({
      data: {},
      id: "msg_old_job",
      timestamp: new Date().toISOString(),
      type: "session.matured",
    });
    await stack.database
      .sql`insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, attempts, next_attempt_at)
      values ('msg_old_job', ${t.tenantId}, ${sub.id}, 'session.matured', 'old-job', ${body}, now(), 1, now())`;
    await js.publish(`${p}deliveries.attempt`, JSON.stringify({ deliveryId: "msg_old_job" }), {
      msgID: "msg_old_job:a1",
    });
    // A dead letter from before lanes, on the old subject.
    const m4 = matured(t);
    const h = natsHeaders();
    h.set(DL.stream, topology.maturedStream);
    h.set(DL.subject, `${p}matured.session`);
    h.set(DL.seq, "999");
    h.set(DL.deliveries, "10");
    h.set(DL.error, "old failure");
    h.set(DL.tenant, t.tenantId);
    h.set(DL.at, new Date().toISOString());
    h.set(DL.headers, "{}");
    const dlAck = await js.publish(`${p}deadletter.matured`, JSON.stringify(m4), { headers: h });

    // The upgrade: the setup runs again (narrows the old consumers), then the new dispatcher.
    await ensureTopology(nc, topology);
    expect((await jsm.consumers.info(topology.maturedStream, "dispatcher-matured")).config.filter_subjects).toEqual([
      `${p}matured.session`,
      `${p}matured.trace`,
    ]);
    expect(
      (await jsm.consumers.info(topology.deliveriesStream, "dispatcher-deliveries")).config.filter_subjects,
    ).toEqual([`${p}deliveries.attempt`]);
    const m3 = matured(t); // published by an upgraded processor: its lane
    await publish(js, topology, maturedStream, m3, { msgID: maturationKey(m3) });
    // First with a quiet period longer than the test: drained, but an older publisher might still be running.
    await startDispatcher({ consume: { policy: { retired: { checkEveryMs: 100, quietMs: 60_000 } } } });
    expect((await replayDeadLetter(js, jsm, topology, dlAck.seq)).subject).toBe(maturedStream.subjectOf!(topology, m4));

    const sessionsSent = () =>
      hits
        .filter((x) => x.host === "upgrade.example.com")
        .map((x) => JSON.parse(x.body).data?.session_id ?? JSON.parse(x.body).id);
    await waitFor(async () => sessionsSent().length >= 5, { what: "old and new messages delivered" });
    const gone = async (stream: string, durable: string) =>
      jsm.consumers.info(stream, durable).then(
        () => false,
        () => true,
      );
    await Bun.sleep(500); // five checks
    expect(await gone(topology.maturedStream, "dispatcher-matured")).toBe(false);
    expect(await gone(topology.deliveriesStream, "dispatcher-deliveries")).toBe(false);
    // An old publisher still running: its message on the old subject is still delivered.
    const late = matured(t);
    await old(late);
    await waitFor(async () => sessionsSent().includes(late.sessionId!), {
      what: "a late message on the old subject delivered",
    });
    // Quiet period over: deleted.
    await startDispatcher({ consume: { policy: { retired: { checkEveryMs: 100, quietMs: 0 } } } });
    await waitFor(
      async () =>
        (await gone(topology.maturedStream, "dispatcher-matured")) &&
        (await gone(topology.deliveriesStream, "dispatcher-deliveries")),
      { what: "old consumers deleted" },
    );
    await Bun.sleep(300);
    expect(sessionsSent().sort()).toEqual(
      [m1.sessionId, m2.sessionId, m3.sessionId, m4.sessionId, late.sessionId, "msg_old_job"].sort(),
    );
    const [job] = await stack.database.sql`select status, attempts from webhook_deliveries where id = 'msg_old_job'`;
    expect(job).toEqual({ status: "delivered", attempts: 2 });
    // ensureTopology again (a later setup run) does not bring the old consumers back.
    await ensureTopology(nc, topology);
    expect(await gone(topology.maturedStream, "dispatcher-matured")).toBe(true);
  }, 60_000);
});
