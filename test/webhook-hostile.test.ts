import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { randomBytes, SecretBox, toBase64 } from "@cellar/shared/crypto";
import { subjects } from "@cellar/shared/nats/topology";
import { maturationKey, type MaturedMessage } from "@cellar/shared/payloads";
import { deliveryHistory } from "@cellar/shared/webhooks/delivery-history";
import { DELIVERY_JOB_LIFETIME_MS } from "../apps/dispatcher/src/retry";
import { stubDns, type DnsAnswer } from "./helpers/dns";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { createReceiver, dispatcherSlot, webhookApi } from "./helpers/webhooks";

// Captured before msw patches fetch: loopback receivers below are real servers.
const nativeFetch = globalThis.fetch;

/** Per-host DNS behaviour; unlisted hosts answer one public address at once. */
const dns: Record<string, DnsAnswer> = {};
const resolveDns = stubDns(dns);

let stack: TestStack;
let req: ReturnType<typeof webhookApi>;
let receiver: Awaited<ReturnType<typeof createReceiver>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let serviceId: string;

const dispatchers = dispatcherSlot(() => stack, {
  resolveDns,
  retryTimeScale: 0.0001,
  fetch: (url, init) => (new URL(url).hostname === "127.0.0.1" ? nativeFetch : fetch)(url, init),
});
const startDispatcher = dispatchers.start;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  req = webhookApi(stack, { resolveDns: stubDns(), insecureAllowlist: "127.0.0.0/8" });
  receiver = await createReceiver();
  tenant = await bootstrapTenant(stack.database.db, { name: "acme", webhooks: true });
  serviceId = (await createService(stack.database.db, { tenantId: tenant.tenantId, name: "support-bot" })).id;
  await startDispatcher({ timeoutMs: 1_000, insecureAllowlist: "127.0.0.0/8" });
});
afterAll(async () => {
  await dispatchers.stop();
  receiver.close();
  await stack.stop();
});

let seq = 0;
async function subscribe(path: string, host = "hooks.example.com") {
  const res = await req("/webhooks", tenant.platformKey, "POST", {
    trace_service_id: serviceId,
    name: path.slice(1),
    url: `https://${host}${path}`,
    event_types: ["session.matured"],
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; secret: string };
}
async function publishMatured() {
  seq++;
  const m = {
    type: "session.matured",
    tenantId: tenant.tenantId,
    traceServiceId: serviceId,
    serviceName: "support-bot",
    entityPk: crypto.randomUUID(),
    sessionId: `conv-${seq}`,
    maturationCount: 1,
    occurredAt: "2026-11-21T10:00:00.000Z",
  } as MaturedMessage;
  await stack.nats.js.publish(subjects.matured(stack.nats.topology, "session", m.tenantId), JSON.stringify(m), {
    msgID: maturationKey(m),
  });
}
/** The subscription's attempts as its history keeps them (a successful first one is in its delivery's row). */
const attempts = async (subscriptionId: string) =>
  (await deliveryHistory(stack.database.sql, subscriptionId, 100))
    .map(({ attempt, status_code, error, duration_ms }) => ({ attempt, status_code, error, duration_ms }))
    .sort((a, b) => a.attempt - b.attempt);

describe("dispatcher: a receiver or a tenant cannot exhaust it", () => {
  test("an endless 200 answer is read no further than a small prefix: delivered at once, not held to the timeout", async () => {
    // A real local server (msw buffers whole answers): 200, then bytes forever.
    let cancelled = false;
    const endless = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response(
          new ReadableStream({
            pull(c) {
              c.enqueue(new Uint8Array(16 * 1024));
            },
            cancel() {
              cancelled = true;
            },
          }),
          { status: 200 },
        ),
    });
    try {
      const res = await req("/webhooks", tenant.platformKey, "POST", {
        trace_service_id: serviceId,
        name: "endless",
        url: `http://127.0.0.1:${endless.port}/endless`,
        event_types: ["session.matured"],
      });
      expect(res.status).toBe(201);
      const s = (await res.json()) as { id: string };
      await publishMatured();
      const [a] = await waitFor(
        async () => {
          const rows = await attempts(s.id);
          return rows.length ? rows : null;
        },
        { what: "the attempt" },
      );
      expect(a.status_code).toBe(200);
      expect(a.error).toBeNull();
      expect(a.duration_ms).toBeLessThan(900);
      // The dispatcher hung up: the server's stream is cancelled rather than read forever.
      await waitFor(async () => cancelled, { what: "the answer's stream cancelled", timeoutMs: 3_000 });
    } finally {
      endless.stop(true);
    }
  });

  test("DNS resolution counts inside the attempt timeout: a resolver that never answers is a timed-out attempt", async () => {
    dns["slow-dns.example.com"] = () => new Promise(() => {});
    // Subscribing resolves too (in the API, with its own resolver): only the dispatcher hangs.
    const s = await subscribe("/slow-dns", "slow-dns.example.com");
    const t0 = Date.now();
    await publishMatured();
    const [a] = await waitFor(
      async () => {
        const rows = await attempts(s.id);
        return rows.length ? rows : null;
      },
      { what: "the timed-out attempt", timeoutMs: 10_000 },
    );
    expect(a.status_code).toBeNull();
    expect(a.error).toBe("timeout after 1000 ms");
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(receiver.hits("/slow-dns")).toHaveLength(0);
  });

  test("attempt records never echo the resolved address of a private destination", async () => {
    dns["internal.example.com"] = async () => ["10.1.2.3"];
    const s = await subscribe("/internal", "internal.example.com");
    await publishMatured();
    const [a] = await waitFor(
      async () => {
        const rows = await attempts(s.id);
        return rows.length ? rows : null;
      },
      { what: "the refused attempt" },
    );
    expect(a.error).toContain("non-public address");
    expect(a.error).not.toContain("10.1.2.3");
  });

  test("a secret no key in the keyring opens is a recorded failed attempt with a clear error, retried like any failure", async () => {
    const s = await subscribe("/unopenable");
    const foreign = new SecretBox(toBase64(randomBytes(32)));
    await stack.database
      .sql`update webhook_subscriptions set secret_encrypted = ${await foreign.seal("whsec_x", s.id)} where id = ${s.id}`;
    await publishMatured();
    const rows = await waitFor(
      async () => {
        const r = await attempts(s.id);
        return r.length >= 2 ? r : null;
      },
      { what: "two failed attempts" },
    );
    expect(rows[0].status_code).toBeNull();
    expect(rows[0].error).toContain(
      `webhook secret cannot be opened: sealed with key ${await foreign.currentKeyId()}, which is not in the keyring`,
    );
    expect(receiver.hits("/unopenable")).toHaveLength(0);
  });
});

describe("dispatcher: no delivery stays pending forever", () => {
  test("retry jobs live as long as the dispatcher assumes: DELIVERIES max_age covers DELIVERY_JOB_LIFETIME_MS", async () => {
    const info = await stack.nats.jsm.streams.info(stack.nats.topology.deliveriesStream);
    expect(info.config.max_age / 1e6).toBeGreaterThanOrEqual(DELIVERY_JOB_LIFETIME_MS);
  });

  test("a pending delivery older than its job's lifetime is reconciled to failed, and can then be retried by hand", async () => {
    receiver.behave["/orphan"] = () => new Response(null, { status: 204 });
    const s = await subscribe("/orphan");
    const id = `msg_orphan${crypto.randomUUID().slice(0, 8)}`;
    const created = new Date(Date.now() - DELIVERY_JOB_LIFETIME_MS - 60_000);
    await stack.database
      .sql`insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, status, attempts, next_attempt_at, created_at)
      values (${id}, ${tenant.tenantId}, ${s.id}, 'session.matured', ${`orphan:${id}`}, '{}', ${created}, 'pending', 3, ${created}, ${created})`;
    expect((await req(`/webhooks/${s.id}/deliveries/${id}/retry`, tenant.platformKey, "POST")).status).toBe(409);
    await dispatchers.current!.prune();
    const [row] = await stack.database.sql`select status, next_attempt_at from webhook_deliveries where id = ${id}`;
    expect(row).toEqual({ status: "failed", next_attempt_at: null });
    expect((await req(`/webhooks/${s.id}/deliveries/${id}/retry`, tenant.platformKey, "POST")).status).toBe(202);
    await waitFor(
      async () =>
        (await stack.database.sql`select status from webhook_deliveries where id = ${id}`)[0].status === "delivered",
      { what: "the manual re-send" },
    );
  });
});
