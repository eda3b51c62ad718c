import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { canonicalJson } from "@cellar/shared/crypto";
import { subjects } from "@cellar/shared/nats/topology";
import { consumersOf, laneConsumerOf, maturedStream } from "@cellar/shared/nats/catalogue";
import { maturationKey, type MaturedMessage } from "@cellar/shared/payloads";
import { stubDns, type DnsAnswer } from "./helpers/dns";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { createReceiver, dispatcherSlot, webhookApi } from "./helpers/webhooks";

/** Scripted DNS: each host answers its list in turn, repeating the last entry. */
const dns: Record<string, DnsAnswer> = {};
const resolveDns = stubDns(dns);

let stack: TestStack;
let req: ReturnType<typeof webhookApi>;
let receiver: Awaited<ReturnType<typeof createReceiver>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let serviceId: string;
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);
const pinnedTargets: string[] = [];

const dispatchers = dispatcherSlot(() => stack, {
  resolveDns,
  now,
  retryTimeScale: 0.0001,
  fetch: (url, init, target) => {
    pinnedTargets.push(`${new URL(url).hostname}=${target.address}`);
    return fetch(url, init);
  },
});
const startDispatcher = dispatchers.start;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  req = webhookApi(stack, { resolveDns });
  receiver = await createReceiver();
  tenant = await bootstrapTenant(stack.database.db, { name: "acme", webhooks: true });
  serviceId = (await createService(stack.database.db, { tenantId: tenant.tenantId, name: "support-bot" })).id;
  await startDispatcher();
});
afterAll(async () => {
  await dispatchers.stop();
  receiver.close();
  await stack.stop();
});

let seq = 0;
async function subscribe(path: string, eventTypes = ["session.matured", "trace.matured"], host = "hooks.example.com") {
  const res = await req("/webhooks", tenant.platformKey, "POST", {
    trace_service_id: serviceId,
    name: path,
    url: `https://${host}${path}`,
    event_types: eventTypes,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; secret: string };
}
function matured(kind: "session" | "trace", overrides: Partial<MaturedMessage> = {}): MaturedMessage {
  seq++;
  return {
    type: `${kind}.matured`,
    tenantId: tenant.tenantId,
    traceServiceId: serviceId,
    serviceName: "support-bot",
    entityPk: crypto.randomUUID(),
    ...(kind === "session" ? { sessionId: `conv-${seq}` } : { traceId: `trace-${seq}` }),
    maturationCount: 1,
    occurredAt: "2026-11-21T10:00:00.000Z",
    ...overrides,
  } as MaturedMessage;
}
async function publish(m: MaturedMessage, msgID = maturationKey(m)) {
  await stack.nats.js.publish(
    subjects.matured(stack.nats.topology, m.type === "session.matured" ? "session" : "trace", m.tenantId),
    JSON.stringify(m),
    { msgID },
  );
}
/** Every MATURED message so far has been handled (fanned out and acked). */
async function maturedDrained() {
  const { topology, jsm } = stack.nats;
  await waitFor(
    async () => {
      for (const c of consumersOf(maturedStream, topology)) {
        const info = await jsm.consumers.info(topology.maturedStream, c.durable);
        if (info.num_pending !== 0 || info.num_ack_pending !== 0) return false;
      }
      return true;
    },
    { what: "MATURED drained" },
  );
}
const sub = async (id: string) => (await req(`/webhooks/${id}`, tenant.platformKey)).json();
const deliveries = async (subscriptionId: string) =>
  stack.database
    .sql`select id, status, attempts, event_key from webhook_deliveries where subscription_id = ${subscriptionId} order by created_at`;

describe("dispatcher", () => {
  test("a matured session is POSTed once with sorted keys, and both standardwebhooks and svix verify the raw body", async () => {
    const s = await subscribe("/signed");
    const traceOnly = await subscribe("/trace-only", ["trace.matured"]);
    const m = matured("session");
    await publish(m);
    const [hook] = await waitFor(async () => receiver.hits("/signed").length === 1 && receiver.hits("/signed"), {
      what: "the delivery",
    });

    const headers = {
      "webhook-id": hook.headers["webhook-id"],
      "webhook-timestamp": hook.headers["webhook-timestamp"],
      "webhook-signature": hook.headers["webhook-signature"],
    };
    expect(new Webhook(s.secret).verify(hook.body, headers)).toBeTruthy();
    expect(new SvixWebhook(s.secret).verify(hook.body, headers)).toBeTruthy();
    expect(() => new Webhook(s.secret).verify(hook.body.replace("conv", "CONV"), headers)).toThrow();
    expect(hook.headers["content-type"]).toBe("application/json");
    expect(hook.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(Math.abs(Number(hook.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);

    const body = JSON.parse(hook.body);
    expect(hook.body).toBe(canonicalJson(body));
    expect(Object.keys(body)).toEqual(["data", "id", "timestamp", "type"]);
    expect(Object.keys(body.data)).toEqual([
      "maturation_count",
      "occurred_at",
      "service_name",
      "session_id",
      "tenant_id",
      "trace_service_id",
    ]);
    expect(body).toEqual({
      id: hook.headers["webhook-id"],
      type: "session.matured",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      data: {
        tenant_id: tenant.tenantId,
        trace_service_id: serviceId,
        service_name: "support-bot",
        session_id: m.sessionId,
        maturation_count: 1,
        occurred_at: m.occurredAt,
      },
    });
    expect(body.id).toMatch(/^msg_/);
    await waitFor(async () => (await sub(s.id)).last_delivery_status === "delivered", { what: "health rollup" });
    const history = (await (await req(`/webhooks/${s.id}/deliveries`, tenant.platformKey)).json()).data;
    expect(history).toEqual([
      expect.objectContaining({
        delivery_id: body.id,
        attempt: 1,
        status_code: 204,
        succeeded: true,
        error: null,
        delivery_status: "delivered",
      }),
    ]);
    expect(receiver.hits("/trace-only")).toHaveLength(0);
    expect(pinnedTargets).toContain("hooks.example.com=93.184.216.34");
    for (const x of [s, traceOnly]) await req(`/webhooks/${x.id}`, tenant.platformKey, "DELETE");
  });

  test("a re-selected trace is a duplicate; a re-matured session is a new delivery with its own id", async () => {
    const s = await subscribe("/dedupe");
    const t = matured("trace");
    await publish(t);
    await waitFor(async () => receiver.hits("/dedupe").length === 1, { what: "first trace delivery" });
    await publish(t, `replay-${t.entityPk}`); // past the stream's duplicate window: a new MATURED message
    const session = matured("session");
    await publish(session);
    await publish({ ...session, maturationCount: 2, occurredAt: "2026-11-21T11:00:00.000Z" });
    await waitFor(async () => receiver.hits("/dedupe").length >= 3, { what: "session deliveries" });
    await Bun.sleep(300);
    const hits = receiver.hits("/dedupe").map((h) => JSON.parse(h.body));
    expect(hits).toHaveLength(3);
    expect(hits.filter((b) => b.type === "trace.matured")).toHaveLength(1);
    const sessions = hits
      .filter((b) => b.type === "session.matured")
      .sort((a, b) => a.data.maturation_count - b.data.maturation_count);
    expect(sessions.map((b) => b.data.maturation_count)).toEqual([1, 2]);
    expect(sessions[0].id).not.toBe(sessions[1].id);
    expect(await deliveries(s.id)).toHaveLength(3);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  test("during a rotation window each delivery carries both signatures; with ttl 0 only the new one", async () => {
    const s = await subscribe("/rotate", ["session.matured"]);
    const rotated = await (
      await req(`/webhooks/${s.id}/rotate-secret`, tenant.platformKey, "POST", { previous_secret_ttl_hours: 24 })
    ).json();
    await publish(matured("session"));
    const [hook] = await waitFor(async () => receiver.hits("/rotate").length === 1 && receiver.hits("/rotate"), {
      what: "rotation delivery",
    });
    const sigs = hook.headers["webhook-signature"].split(" ");
    expect(sigs).toHaveLength(2);
    for (const secret of [s.secret, rotated.secret]) {
      expect(new Webhook(secret).verify(hook.body, hook.headers)).toBeTruthy();
      expect(new SvixWebhook(secret).verify(hook.body, hook.headers)).toBeTruthy();
    }
    // Each signature on its own belongs to exactly one of the two secrets.
    const one = (sig: string, secret: string) => {
      try {
        return !!new Webhook(secret).verify(hook.body, { ...hook.headers, "webhook-signature": sig });
      } catch {
        return false;
      }
    };
    expect(sigs.map((g) => [one(g, s.secret), one(g, rotated.secret)])).toEqual([
      [false, true],
      [true, false],
    ]);

    const cut = await (
      await req(`/webhooks/${s.id}/rotate-secret`, tenant.platformKey, "POST", { previous_secret_ttl_hours: 0 })
    ).json();
    await publish(matured("session"));
    const second = await waitFor(async () => receiver.hits("/rotate").length === 2 && receiver.hits("/rotate")[1], {
      what: "post-cutover delivery",
    });
    expect(second.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(new Webhook(cut.secret).verify(second.body, second.headers)).toBeTruthy();
    expect(() => new Webhook(rotated.secret).verify(second.body, second.headers)).toThrow();
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  for (const [status, reason] of [
    [301, "redirect"],
    [302, "redirect"],
    [307, "redirect"],
    [410, "gone"],
  ] as const) {
    test(`${status} disables the subscription at once (${reason}), is not retried and no redirect is followed`, async () => {
      const path = `/answer-${status}`;
      receiver.behave[path] = () =>
        new Response(null, { status, headers: { location: "https://hooks.example.com/followed" } });
      const s = await subscribe(path);
      await publish(matured("session"));
      await waitFor(async () => (await sub(s.id)).enabled === false, { what: "subscription disabled" });
      // The disable, the health rollup and the delivery's final state may land in separate writes.
      await waitFor(
        async () =>
          (await sub(s.id)).last_delivery_status === "failed" && (await deliveries(s.id))[0]?.status === "stopped",
        {
          what: "health rollup and stopped delivery",
        },
      );
      await Bun.sleep(300);
      expect(receiver.hits(path)).toHaveLength(1);
      expect(receiver.hits("/followed")).toHaveLength(0);
      expect(await sub(s.id)).toMatchObject({
        enabled: false,
        disabled_reason: reason,
        consecutive_failures: 1,
        last_delivery_status: "failed",
      });
      expect((await deliveries(s.id)).map((d) => [d.status, d.attempts])).toEqual([["stopped", 1]]);
      // Later events are not delivered to a disabled subscription.
      await publish(matured("session"));
      await Bun.sleep(200);
      expect(receiver.hits(path)).toHaveLength(1);
      await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
    });
  }

  test("DNS turning private between attempts disables with private_address and nothing is sent there", async () => {
    dns["rebind.example.com"] = { script: [["93.184.216.34"], ["93.184.216.34"], ["10.0.0.9"]] }; // create, attempt 1, attempt 2+
    receiver.behave["/rebind"] = () => new Response("busy", { status: 503 });
    const s = await subscribe("/rebind", ["session.matured"], "rebind.example.com");
    await publish(matured("session"));
    await waitFor(async () => (await sub(s.id)).disabled_reason === "private_address", { what: "private_address" });
    expect(receiver.hits("/rebind")).toHaveLength(1);
    expect(pinnedTargets.filter((t) => t.startsWith("rebind.example.com="))).toEqual([
      "rebind.example.com=93.184.216.34",
    ]);
    const history = (await (await req(`/webhooks/${s.id}/deliveries`, tenant.platformKey)).json()).data;
    expect(history.map((a: any) => [a.attempt, a.status_code])).toEqual([
      [2, null],
      [1, 503],
    ]);
    expect(history[0].error).toMatch(/non-public address/);
    expect(history[0].error).not.toContain("10.0.0.9"); // no internal-DNS oracle for tenant admins
    expect((await deliveries(s.id))[0].status).toBe("stopped");
    // Enabling re-validates the URL: still private, so it stays off.
    expect((await req(`/webhooks/${s.id}/enable`, tenant.platformKey, "POST")).status).toBe(400);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  test("failures across separate deliveries for 5 days straight disable the subscription (injected clock)", async () => {
    await startDispatcher({ retryTimeScale: 1 }); // keep the curve's retries out of the way
    receiver.behave["/failing"] = () => new Response("down", { status: 500 });
    const s = await subscribe("/failing", ["session.matured"]);
    try {
      await publish(matured("session"));
      // Its failed attempt (a count of exactly 1 would hold only until its retry, 5 s on).
      await waitFor(async () => ((await deliveries(s.id))[0]?.attempts ?? 0) >= 1, { what: "first failure" });
      expect((await sub(s.id)).consecutive_failures).toBeGreaterThanOrEqual(1);
      clockOffsetMs = 4 * 24 * 3600_000; // 4 days on: still failing, still enabled
      await publish(matured("session"));
      // The second delivery's failed attempt. On the moved clock the first delivery's retry is due
      // at once too, so the count can go from 1 to 3 between two reads (a loaded CI run did): wait
      // for the attempt itself, not for a count of exactly 2.
      await waitFor(
        async () => {
          const rows = await deliveries(s.id);
          return rows.length === 2 && rows[1].attempts >= 1;
        },
        { what: "the second delivery's failure" },
      );
      const after4Days = await sub(s.id);
      expect(after4Days).toMatchObject({ enabled: true, disabled_reason: null, last_delivery_status: "failed" });
      expect(after4Days.consecutive_failures).toBeGreaterThanOrEqual(2);
      clockOffsetMs = 5 * 24 * 3600_000 + 60_000;
      await publish(matured("session"));
      await waitFor(async () => (await sub(s.id)).enabled === false, { what: "disabled after 5 days" });
      expect((await sub(s.id)).disabled_reason).toBe("failing");
    } finally {
      // Whatever happened above, the next tests get today's clock and an ordinary dispatcher (a
      // failure here once failed three more tests: their signatures' timestamps were 4 days ahead).
      clockOffsetMs = 0;
      await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
      await startDispatcher();
    }
  });

  test("a success resets the failure streak", async () => {
    receiver.behave["/flaky"] = (n) => new Response(null, { status: n === 1 ? 500 : 200 });
    const s = await subscribe("/flaky", ["session.matured"]);
    await publish(matured("session"));
    await waitFor(async () => (await sub(s.id)).last_delivery_status === "delivered", { what: "retry success" });
    expect(await sub(s.id)).toMatchObject({ enabled: true, consecutive_failures: 0 });
    const [row] = await stack.database.sql`select failing_since from webhook_subscriptions where id = ${s.id}`;
    expect(row.failing_since).toBeNull();
    const [d] = await deliveries(s.id);
    expect([d.status, d.attempts]).toEqual(["delivered", 2]);
    // Retries reuse id, body and timestamp.
    const [a, b] = receiver.hits("/flaky");
    expect(b.body).toBe(a.body);
    expect(b.headers["webhook-id"]).toBe(a.headers["webhook-id"]);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  test("a receiver slower than the timeout counts as a failed attempt", async () => {
    await startDispatcher({ timeoutMs: 200, retryTimeScale: 1 });
    receiver.behave["/slow"] = async () => {
      await Bun.sleep(1500);
      return new Response(null, { status: 200 });
    };
    const s = await subscribe("/slow", ["session.matured"]);
    await publish(matured("session"));
    const history = await waitFor(
      async () => {
        const data = (await (await req(`/webhooks/${s.id}/deliveries`, tenant.platformKey)).json()).data;
        return data.length === 1 && data;
      },
      { what: "timed-out attempt" },
    );
    expect(history[0]).toMatchObject({
      attempt: 1,
      status_code: null,
      succeeded: false,
      error: "timeout after 200 ms",
    });
    expect((await deliveries(s.id))[0].status).toBe("pending");
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
    await startDispatcher();
  });

  test("attempts to one endpoint are capped at the platform-set concurrency", async () => {
    await startDispatcher({ endpointConcurrency: 2 });
    receiver.behave["/capped"] = async () => {
      await Bun.sleep(100);
      return new Response(null, { status: 200 });
    };
    const s = await subscribe("/capped", ["trace.matured"]);
    await Promise.all(Array.from({ length: 8 }, () => publish(matured("trace"))));
    await waitFor(async () => receiver.hits("/capped").length === 8, { what: "8 deliveries" });
    expect(receiver.maxConcurrent("/capped")).toBeLessThanOrEqual(2);
    expect(receiver.maxConcurrent("/capped")).toBeGreaterThanOrEqual(1);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
    await startDispatcher();
  });

  test("no deliveries for disabled subscriptions or tenants without the entitlement", async () => {
    const s = await subscribe("/quiet", ["session.matured"]);
    await req(`/webhooks/${s.id}/disable`, tenant.platformKey, "POST");
    await publish(matured("session"));
    await maturedDrained();
    await req(`/webhooks/${s.id}/enable`, tenant.platformKey, "POST");
    await stack.database.sql`update tenants set webhooks_enabled = false where id = ${tenant.tenantId}`;
    await publish(matured("session"));
    await maturedDrained();
    await stack.database.sql`update tenants set webhooks_enabled = true where id = ${tenant.tenantId}`;
    expect(receiver.hits("/quiet")).toHaveLength(0);
    expect(await deliveries(s.id)).toHaveLength(0);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  test("a batch of trace maturations delivers each once; one regrouped after a crash adds only what is new", async () => {
    const s = await subscribe("/batch", ["trace.matured"]);
    const [t1, t2, t3] = [matured("trace"), matured("trace"), matured("trace")];
    const publishBatch = (traces: MaturedMessage[], msgID: string) =>
      stack.nats.js.publish(
        subjects.matured(stack.nats.topology, "trace", tenant.tenantId),
        JSON.stringify({ type: "matured.batch", tenantId: tenant.tenantId, maturations: traces }),
        { msgID },
      );
    await publishBatch([t1, t2], "batch-a");
    await waitFor(async () => receiver.hits("/batch").length === 2, { what: "both traces of the batch" });
    // The processor died between this publish and its record: the owed traces go out again in
    // another grouping (another message id), beside a trace matured since.
    await publishBatch([t2, t3], "batch-b");
    await waitFor(async () => receiver.hits("/batch").length >= 3, { what: "the new trace" });
    await Bun.sleep(300);
    const hits = receiver.hits("/batch");
    const bodies = hits.map((h) => new Webhook(s.secret).verify(h.body, h.headers) as any);
    expect(bodies.map((b) => b.data.trace_id).sort()).toEqual([t1, t2, t3].map((t) => t.traceId).sort());
    expect(new Set(hits.map((h) => h.headers["webhook-id"])).size).toBe(3);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  test("POST /webhooks/:id/test sends a signed example; .../retry re-sends a failed delivery with the same id and body", async () => {
    receiver.behave["/manual"] = (n) => new Response(null, { status: n === 1 ? 500 : 200 });
    const s = await subscribe("/manual", ["trace.matured"]);
    const sent = await req(`/webhooks/${s.id}/test`, tenant.platformKey, "POST");
    expect(sent.status).toBe(202);
    const { id } = await sent.json();
    expect(id).toMatch(/^msg_/);
    const first = await waitFor(async () => receiver.hits("/manual")[0], { what: "test event" });
    expect(new SvixWebhook(s.secret).verify(first.body, first.headers)).toMatchObject({
      id,
      type: "trace.matured",
      data: { trace_id: "test_trace", maturation_count: 1 },
    });
    // A test send is one attempt: the 500 is final, with no curve behind it.
    await waitFor(async () => (await deliveries(s.id))[0]?.status === "failed", { what: "failed test delivery" });
    expect((await req(`/webhooks/${s.id}/test`, tenant.platformKey, "POST", { event_type: "nope" })).status).toBe(400);
    expect((await req(`/webhooks/${s.id}/deliveries/msg_nope/retry`, tenant.platformKey, "POST")).status).toBe(404);

    const retried = await req(`/webhooks/${s.id}/deliveries/${id}/retry`, tenant.platformKey, "POST");
    expect(retried.status).toBe(202);
    const second = await waitFor(async () => receiver.hits("/manual")[1], { what: "re-sent delivery" });
    expect(second.body).toBe(first.body);
    expect(second.headers["webhook-id"]).toBe(id);
    await waitFor(async () => (await deliveries(s.id))[0]?.status === "delivered", { what: "delivered after retry" });
    const history = (await (await req(`/webhooks/${s.id}/deliveries`, tenant.platformKey)).json()).data;
    expect(history.map((a: any) => [a.attempt, a.status_code])).toEqual([
      [2, 200],
      [1, 500],
    ]);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  test("a MATURED message redelivered after a crash finishes the deliveries it had inserted, with their ids", async () => {
    const s = await subscribe("/replay", ["trace.matured"]);
    const t = matured("trace");
    const t2 = matured("trace");
    const body = (id: string) =>
      JSON.stringify({ data: {}, id, timestamp: "2026-11-21T10:00:00.000Z", type: "trace.matured" });
    // The crashed dispatcher had inserted both rows; one it had also tried once (failed) but
    // died before publishing the retry job.
    await dispatchers.current!.stop();
    await stack.database
      .sql`insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, attempts, next_attempt_at)
      values ('msg_crashed', ${tenant.tenantId}, ${s.id}, 'trace.matured', ${maturationKey(t)}, ${body("msg_crashed")}, now(), 0, null),
             ('msg_crashed2', ${tenant.tenantId}, ${s.id}, 'trace.matured', ${maturationKey(t2)}, ${body("msg_crashed2")}, now(), 1, now())`;
    await publish(t);
    await publish(t2);
    // It never acked them: take both and let them go back, as an expired ack deadline would.
    const consumer = await stack.nats.js.consumers.get(
      stack.nats.topology.maturedStream,
      laneConsumerOf(maturedStream, stack.nats.topology, tenant.tenantId).durable,
    );
    const taken = [];
    for await (const m of await consumer.fetch({ max_messages: 2, expires: 5000 })) taken.push(m);
    expect(taken).toHaveLength(2);
    for (const m of taken) m.nak();
    await startDispatcher();

    await waitFor(async () => receiver.hits("/replay").length === 2, { what: "both pending deliveries attempted" });
    expect(
      receiver
        .hits("/replay")
        .map((h) => h.headers["webhook-id"])
        .sort(),
    ).toEqual(["msg_crashed", "msg_crashed2"]);
    expect(receiver.hits("/replay").find((h) => h.headers["webhook-id"] === "msg_crashed")!.body).toBe(
      body("msg_crashed"),
    );
    await waitFor(async () => (await deliveries(s.id)).every((d) => d.status === "delivered"), {
      what: "both delivered",
    });
    expect(Object.fromEntries((await deliveries(s.id)).map((d) => [d.id, d.attempts]))).toEqual({
      msg_crashed: 1,
      msg_crashed2: 2,
    });

    // A fresh MATURED message for the same event (a re-selection) owns nothing: no new send.
    await stack.database.sql`update webhook_deliveries set status = 'pending' where id = 'msg_crashed'`;
    await publish(t, `reselected-${t.entityPk}`);
    await maturedDrained();
    await Bun.sleep(200);
    expect(receiver.hits("/replay")).toHaveLength(2);
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });

  test("history older than 30 days is pruned, and with it the dedup record", async () => {
    const s = await subscribe("/pruned", ["trace.matured"]);
    const t = matured("trace");
    await publish(t);
    await waitFor(async () => receiver.hits("/pruned").length === 1, { what: "delivery" });
    clockOffsetMs = 29 * 24 * 3600_000;
    await dispatchers.current!.prune();
    expect(await deliveries(s.id)).toHaveLength(1);
    clockOffsetMs = 31 * 24 * 3600_000;
    await dispatchers.current!.prune();
    clockOffsetMs = 0;
    expect(await deliveries(s.id)).toHaveLength(0);
    await publish(t, `after-retention-${t.entityPk}`);
    await waitFor(async () => receiver.hits("/pruned").length === 2, {
      what: "a new delivery once the dedup record is gone",
    });
    await req(`/webhooks/${s.id}`, tenant.platformKey, "DELETE");
  });
});
