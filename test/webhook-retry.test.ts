import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { subjects } from "@cellar/shared/nats/topology";
import { RETRY_STEPS_MS } from "../apps/dispatcher/src/retry";
import { stubDns } from "./helpers/dns";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { createReceiver, dispatcherSlot, webhookApi } from "./helpers/webhooks";

const resolveDns = stubDns();
let stack: TestStack;
let req: ReturnType<typeof webhookApi>;
let receiver: Awaited<ReturnType<typeof createReceiver>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
/** Every nak delay the dispatcher asked for, per delivery, in attempt order. */
const planned: Record<string, Array<{ attempt: number; action: string; delayMs?: number }>> = {};

const dispatchers = dispatcherSlot(() => stack, {
  resolveDns,
  fetch: (url, init) => fetch(url, init),
  onAttempt: ({ deliveryId, attempt, verdict }) => {
    (planned[deliveryId] ??= []).push({
      attempt,
      action: verdict.action,
      delayMs: verdict.action === "nak" ? verdict.delayMs : undefined,
    });
  },
});
const startDispatcher = dispatchers.start;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  req = webhookApi(stack, { resolveDns });
  receiver = await createReceiver();
  tenant = await bootstrapTenant(stack.database.db, { name: "acme", webhooks: true });
});
afterAll(async () => {
  await dispatchers.stop();
  receiver.close();
  await stack.stop();
});

/** Each path gets a service of its own, so one event reaches one subscription. */
async function subscribeAndSend(path: string) {
  const serviceId = (await createService(stack.database.db, { tenantId: tenant.tenantId, name: `svc${path}` })).id;
  const res = await req("/webhooks", tenant.platformKey, "POST", {
    trace_service_id: serviceId,
    name: path,
    url: `https://hooks.example.com${path}`,
    event_types: ["session.matured"],
  });
  const sub = await res.json();
  const m = {
    type: "session.matured",
    tenantId: tenant.tenantId,
    traceServiceId: serviceId,
    serviceName: `svc${path}`,
    entityPk: crypto.randomUUID(),
    sessionId: path,
    maturationCount: 3,
    occurredAt: new Date().toISOString(),
  };
  await stack.nats.js.publish(subjects.matured(stack.nats.topology, "session", m.tenantId), JSON.stringify(m), {
    msgID: `session:${m.entityPk}:3`,
  });
  return sub as { id: string; secret: string };
}

test("a receiver that always fails gets 9 attempts on the scaled curve, each delay within +/-10%, then none", async () => {
  // 20 h becomes 1.5 s: the whole curve takes about 4 s.
  const scale = 1500 / RETRY_STEPS_MS[7];
  await startDispatcher({ retryTimeScale: scale });
  receiver.behave["/down"] = () => new Response("down", { status: 500 });
  const sub = await subscribeAndSend("/down");
  await waitFor(async () => receiver.hits("/down").length === 9, { what: "9 attempts", timeoutMs: 40_000 });
  const [delivery] = await waitFor(
    async () => {
      const rows = await stack.database
        .sql`select id, status, attempts from webhook_deliveries where subscription_id = ${sub.id}`;
      return rows[0]?.status === "failed" && rows;
    },
    { what: "permanently failed" },
  );
  expect(delivery.attempts).toBe(9);
  await Bun.sleep(500);
  expect(receiver.hits("/down")).toHaveLength(9);

  const plan = planned[delivery.id];
  expect(plan.map((p) => p.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  expect(plan.map((p) => p.action)).toEqual(["nak", "nak", "nak", "nak", "nak", "nak", "nak", "nak", "term"]);
  const hits = receiver.hits("/down");
  const starts = (
    await stack.database
      .sql`select attempted_at from webhook_attempts where delivery_id = ${delivery.id} order by attempt`
  ).map((r) => r.attempted_at.getTime());
  for (let i = 0; i < 8; i++) {
    const step = RETRY_STEPS_MS[i] * scale;
    // nak takes whole milliseconds, so the sub-millisecond first step rounds to 1 ms.
    expect(Math.abs(plan[i].delayMs! - step)).toBeLessThanOrEqual(Math.max(step * 0.1, 1));
    // No attempt starts before its delay has passed since the previous one started (no upper
    // bound: the machine may be busy).
    expect(starts[i + 1] - starts[i]).toBeGreaterThanOrEqual(plan[i].delayMs! - 1);
  }
  // Every attempt: same id and body, valid signature, maturation_count untouched.
  for (const h of hits) {
    expect(h.body).toBe(hits[0].body);
    expect(h.headers["webhook-id"]).toBe(delivery.id);
    expect(new Webhook(sub.secret).verify(h.body, h.headers)).toMatchObject({ data: { maturation_count: 3 } });
  }
  const after = await (await req(`/webhooks/${sub.id}`, tenant.platformKey)).json();
  expect(after).toMatchObject({ enabled: true, consecutive_failures: 9, last_delivery_status: "failed" });
  const listed = (await (await req(`/webhooks/${sub.id}/deliveries`, tenant.platformKey)).json()).data;
  expect(listed.map((a: any) => a.attempt)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  expect(listed[0]).toMatchObject({ status_code: 500, error: "HTTP 500", delivery_status: "failed" });
});

test("429 and 408 honor a Retry-After later than the curve's next step, and only those", async () => {
  await startDispatcher({ retryTimeScale: 0.1 }); // first retry step: 500 ms +/- 10%
  receiver.behave["/429"] = (n) =>
    n === 1
      ? new Response(null, { status: 429, headers: { "retry-after": "2" } })
      : new Response(null, { status: 200 });
  receiver.behave["/408-date"] = (n) =>
    n === 1
      ? new Response(null, { status: 408, headers: { "retry-after": new Date(Date.now() + 3000).toUTCString() } })
      : new Response(null, { status: 200 });
  receiver.behave["/429-early"] = (n) =>
    n === 1
      ? new Response(null, { status: 429, headers: { "retry-after": "0" } })
      : new Response(null, { status: 200 });
  receiver.behave["/503"] = (n) =>
    n === 1
      ? new Response(null, { status: 503, headers: { "retry-after": "3" } })
      : new Response(null, { status: 200 });
  const subs = await Promise.all(["/429", "/408-date", "/429-early", "/503"].map(subscribeAndSend));
  for (const path of ["/429", "/408-date", "/429-early", "/503"]) {
    await waitFor(async () => receiver.hits(path).length === 2, {
      what: `second attempt on ${path}`,
      timeoutMs: 20_000,
    });
  }
  const rows = await stack.database
    .sql`select id, subscription_id from webhook_deliveries where subscription_id = any(${subs.map((s) => s.id)}::uuid[])`;
  const delayOf = (i: number) => planned[rows.find((r) => r.subscription_id === subs[i].id)!.id][0].delayMs!;
  expect(delayOf(0)).toBe(2000);
  // An HTTP date 2-3 s ahead of the receiver's clock (second precision), measured from the
  // attempt's start, which is earlier on a busy machine.
  expect(delayOf(1)).toBeGreaterThan(1500);
  expect(delayOf(1)).toBeLessThan(10_000);
  for (const i of [2, 3]) {
    expect(delayOf(i)).toBeGreaterThanOrEqual(450);
    expect(delayOf(i)).toBeLessThanOrEqual(550);
  }
  // The waits really happened: far longer than the curve's 0.5 s (the delay counts from the
  // attempt's start, so the gap between arrivals can be a little shorter than it).
  const gap = (path: string) => receiver.hits(path)[1].at - receiver.hits(path)[0].at;
  expect(gap("/429")).toBeGreaterThanOrEqual(1500);
  expect(gap("/408-date")).toBeGreaterThanOrEqual(1000);
});
