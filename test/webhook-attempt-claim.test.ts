// One attempt of a delivery at a time (docs/webhooks.md "One attempt at a time"). Two messages
// can own one pending delivery at once: a MATURED batch back again (deliveryCount > 1) owns every
// pending delivery of its events, including one whose first attempt another message has in
// flight; a DELIVERIES job redelivered beside the first. Each used to POST it. Real Postgres and
// nats-server (the harness's), the real delivery path and a running dispatcher (for the jobs
// handed on), a slow msw receiver; the MATURED and DELIVERIES handlers are called with messages
// whose delivery count the test sets, as the stream would hand them over.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { deliveriesStream, consumersOf } from "@cellar/shared/nats/catalogue";
import type { MaturedMessage, MaturedStreamMessage } from "@cellar/shared/payloads";
import { newDeliveryId } from "@cellar/shared/webhooks/deliveries";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { createLogger } from "@cellar/shared/logger";
import { createDeliveryPath, type DeliveryPath } from "../apps/dispatcher/src/attempt";
import { handleDeliveryAttempt } from "../apps/dispatcher/src/delivery-attempts";
import { batchedFanOut, handleMatured, type FanOutOne } from "../apps/dispatcher/src/matured";
import { createDispatchResources } from "../apps/dispatcher/src/resources";
import type { DispatcherDeps } from "../apps/dispatcher/src/dispatcher";
import { msgWith } from "./helpers/dispatch-pieces";
import { stubDns } from "./helpers/dns";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { createReceiver, dispatcherSlot, webhookApi } from "./helpers/webhooks";

/** Short, so a claim left by a "crashed" attempt ends within the test. */
const LEASE_MS = 3_000;
const SLOW_MS = 1_500;
const resolveDns = stubDns();
let stack: TestStack;
let receiver: Awaited<ReturnType<typeof createReceiver>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let path: DeliveryPath;
let fanOutOne: FanOutOne;
const deps = (): Partial<DispatcherDeps> => ({
  resolveDns,
  fetch: (url, init) => fetch(url, init),
  attemptLeaseMs: LEASE_MS,
  retryTimeScale: 0.001,
});
const dispatchers = dispatcherSlot(() => stack, {});

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  receiver = await createReceiver();
  tenant = await bootstrapTenant(stack.database.db, { name: "claims", webhooks: true });
  // A running dispatcher takes the jobs handed to DELIVERIES; the handlers below are this
  // process's second copy of the path, as a second dispatcher process would be.
  await dispatchers.start(deps());
  const resources = createDispatchResources({
    sql: stack.database.sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger: createLogger("silent"),
    secretBox: stack.secretBox,
    ...deps(),
  });
  path = createDeliveryPath(resources);
  fanOutOne = batchedFanOut(resources);
});
afterAll(async () => {
  await dispatchers.stop();
  receiver.close();
  await stack.stop();
});

/** A service of its own per test, so each event reaches one subscription. */
async function subscribe(hookPath: string) {
  const serviceId = (await createService(stack.database.db, { tenantId: tenant.tenantId, name: `svc${hookPath}` })).id;
  const res = await webhookApi(stack, { resolveDns })("/webhooks", tenant.platformKey, "POST", {
    trace_service_id: serviceId,
    name: hookPath,
    url: `https://hooks.example.com${hookPath}`,
    event_types: ["trace.matured"],
  });
  expect(res.status).toBe(201);
  return { ...((await res.json()) as { id: string }), serviceId };
}
let seq = 0;
const trace = (serviceId: string): MaturedMessage => ({
  type: "trace.matured",
  tenantId: tenant.tenantId,
  traceServiceId: serviceId,
  serviceName: "claims",
  entityPk: crypto.randomUUID(),
  traceId: `claim-trace-${++seq}`,
  maturationCount: 1,
  occurredAt: new Date().toISOString(),
});
const batch = (maturations: MaturedMessage[]): MaturedStreamMessage => ({
  type: "matured.batch",
  tenantId: tenant.tenantId,
  maturations,
});
const rows = (subscriptionId: string) =>
  stack.database.sql<{ id: string; status: string; attempts: number }[]>`
    select id, status, attempts from webhook_deliveries where subscription_id = ${subscriptionId} order by id`;
/** Every job handed to DELIVERIES has been taken and finished. */
async function deliveriesDrained() {
  const { topology, jsm } = stack.nats;
  await waitFor(
    async () => {
      for (const c of consumersOf(deliveriesStream, topology)) {
        const info = await jsm.consumers.info(topology.deliveriesStream, c.durable).catch(() => null);
        if (info && (info.num_pending !== 0 || info.num_ack_pending !== 0)) return false;
      }
      return true;
    },
    { what: "DELIVERIES drained", timeoutMs: 30_000 },
  );
}
const postsOf = (hookPath: string) => receiver.hits(hookPath).map((h) => h.headers["webhook-id"]);

test("a MATURED batch back again while the first copy's POST is in flight does not POST it again; its new event is sent", async () => {
  receiver.behave["/race"] = async () => {
    await Bun.sleep(SLOW_MS);
    return new Response(null, { status: 200 });
  };
  const s = await subscribe("/race");
  const [t1, t2] = [trace(s.serviceId), trace(s.serviceId)];
  // The first copy inserts t1's delivery and starts its POST (a slow receiver).
  const first = handleMatured(path, fanOutOne, { value: batch([t1]), msg: msgWith(1) });
  await waitFor(async () => receiver.hits("/race").length === 1, { what: "the first POST in flight" });
  // A batch carrying t1 again, redelivered: it owns every pending delivery of its events.
  await handleMatured(path, fanOutOne, { value: batch([t1, t2]), msg: msgWith(2) });
  await first;
  await waitFor(async () => (await rows(s.id)).every((r) => r.status === "delivered"), { what: "both delivered" });
  await deliveriesDrained();
  const delivered = await rows(s.id);
  expect(delivered).toHaveLength(2);
  expect(delivered.map((r) => r.attempts)).toEqual([1, 1]);
  // One POST per delivery.
  expect(postsOf("/race").sort()).toEqual(delivered.map((r) => r.id).sort());
});

test("two DELIVERIES jobs of one delivery at once (a redelivered job beside the first): one POST", async () => {
  receiver.behave["/jobs"] = async () => {
    await Bun.sleep(SLOW_MS);
    return new Response(null, { status: 200 });
  };
  const s = await subscribe("/jobs");
  const id = newDeliveryId();
  // A row without a claim, as a test send or a retry job finds it.
  await deliveryState.insert(stack.database.sql, [
    {
      id,
      tenant_id: tenant.tenantId,
      subscription_id: s.id,
      event_type: "trace.matured",
      event_key: `claim-jobs-${id}`,
      body: JSON.stringify({ id }),
      enqueued_at: new Date(),
    },
  ]);
  const job = { value: { deliveryId: id, tenantId: tenant.tenantId }, msg: msgWith(1) };
  const [a, b] = await Promise.all([
    handleDeliveryAttempt(path, job),
    handleDeliveryAttempt(path, { ...job, msg: msgWith(2) }),
  ]);
  // One sent and acked; the other refused the claim, to come back when it ends.
  const outcomes = [a, b].map((o) => (o === "ack" ? "ack" : typeof o === "object" && "retryInMs" in o ? "nak" : o));
  expect(outcomes.sort()).toEqual(["ack", "nak"]);
  const nak = [a, b].find((o) => o !== "ack") as { retryInMs: number };
  expect(nak.retryInMs).toBeGreaterThan(0);
  expect(nak.retryInMs).toBeLessThanOrEqual(LEASE_MS);
  // It comes back: the delivery is done, nothing more is sent.
  expect(await handleDeliveryAttempt(path, { ...job, msg: msgWith(3) })).toBe("ack");
  expect(postsOf("/jobs")).toEqual([id]);
  expect((await rows(s.id))[0]).toMatchObject({ status: "delivered", attempts: 1 });
});

test("a copy back after a crash that held the claim sends once, after the dead claim ends", async () => {
  const s = await subscribe("/crashed");
  const t = trace(s.serviceId);
  // The crashed process's fan-out: the row inserted and claimed, the POST never made. (Its
  // batcher is the test's own, with the test's lease.)
  const fanned = await fanOutOne(t);
  expect(fanned).toHaveLength(1);
  const claimedAt = Date.now();
  // Its MATURED message comes back to a live process.
  await handleMatured(path, fanOutOne, { value: batch([t]), msg: msgWith(2) });
  expect(postsOf("/crashed")).toEqual([]);
  await waitFor(async () => (await rows(s.id))[0]?.status === "delivered", {
    what: "delivered once the claim ended",
    timeoutMs: 20_000,
  });
  await deliveriesDrained();
  const hits = receiver.hits("/crashed");
  expect(hits.map((h) => h.headers["webhook-id"])).toEqual([fanned[0].id]);
  expect(hits[0].at).toBeGreaterThanOrEqual(claimedAt + LEASE_MS - 1_000);
  expect((await rows(s.id))[0].attempts).toBe(1);
});

test("claims in SQL: refused while held, given back only by the claim that took it, taken over once ended, never on a moved row", async () => {
  const s = await subscribe("/sql");
  const sql = stack.database.sql;
  const t0 = new Date();
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const id = newDeliveryId();
  const row = {
    id,
    tenant_id: tenant.tenantId,
    subscription_id: s.id,
    event_type: "trace.matured",
    event_key: `claim-sql-${id}`,
    body: "{}",
    enqueued_at: t0,
  };
  // Inserted claimed (the fan-out's first attempt).
  expect(await deliveryState.insert(sql, [row], at(10_000))).toEqual([id]);
  const claim = (attempts: number, now: number, until: number) =>
    deliveryState.claimAttempts(sql, [{ deliveryId: id, attempts, now: at(now), until: at(until) }]);
  expect(await claim(0, 1_000, 31_000)).toEqual([{ claimed: false, heldUntil: at(10_000) }]);
  // Another claim's end does not give it back; the insert's own does.
  await deliveryState.releaseLeases(sql, [{ deliveryId: id, until: at(9_999) }]);
  expect(await claim(0, 1_000, 31_000)).toEqual([{ claimed: false, heldUntil: at(10_000) }]);
  await deliveryState.releaseLeases(sql, [{ deliveryId: id, until: at(10_000) }]);
  // Two claims of it in one statement: one is granted.
  const both = await deliveryState.claimAttempts(sql, [
    { deliveryId: id, attempts: 0, now: at(1_000), until: at(31_000) },
    { deliveryId: id, attempts: 0, now: at(1_000), until: at(32_000) },
  ]);
  expect(both).toEqual([{ claimed: true }, { claimed: false, heldUntil: at(31_000) }]);
  // Past its end, it is taken over; a claim that read other attempts than the row's is refused.
  expect(await claim(1, 40_000, 70_000)).toEqual([{ claimed: false, heldUntil: null }]);
  expect(await claim(0, 40_000, 70_000)).toEqual([{ claimed: true }]);
  // A failure record ends the claim: the retry claims at once.
  await deliveryState.recordFailure(sql, {
    deliveryId: id,
    subscriptionId: s.id,
    attempt: 1,
    statusCode: 500,
    durationMs: 3,
    error: "HTTP 500",
    attemptedAt: at(41_000),
    status: "pending",
    nextAttemptAt: at(46_000),
  });
  expect(await claim(1, 46_000, 76_000)).toEqual([{ claimed: true }]);
});
