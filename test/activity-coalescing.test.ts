import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { activityLane, activitySubject } from "../apps/processor/src/maturation/activity";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

// Window 3 s, at most one put per session per second: coalescing is on (window - 1 s >= 1 s).
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 3, startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "coalesce" });
  await stack.startProcessor({ activityCoalesceMs: 1000 });
});
afterAll(() => stack.stop());

const send = (sessionId: string, n: number) =>
  stack
    .ingestRequest(
      "/raw/traces",
      chatTrace({ sessionId, messages: [{ role: "user", content: `turn ${n}` }], reply: "ok" }),
      { authorization: `Bearer ${tenant.telemetryKey}` },
    )
    .then((r) => expect(r.status).toBe(200));

const row = async (sessionId: string) =>
  (
    await stack.database.sql<
      { id: string; maturation_count: number; published_count: number; late_ms: number | null }[]
    >`
    select id, maturation_count, published_count, extract(epoch from matured_at - last_ingested_at - interval '3 seconds') * 1000 as late_ms
    from sessions where session_id = ${sessionId}`
  )[0];

test("a session writing several times a second matures once, under a second after window past its last write", async () => {
  for (let i = 0; i < 8; i++) {
    await send("co-1", i);
    await Bun.sleep(250);
  }
  const matured = await waitFor(
    async () => {
      const r = await row("co-1");
      return r?.published_count === 1 && r;
    },
    { what: "co-1 matured", timeoutMs: 20_000 },
  );
  expect(matured.maturation_count).toBe(1);
  // Never early (the idle check is in Postgres), and not late by the coalescing: a put the
  // coalescer lost or deferred would cost a whole window (3 s). The bound leaves a loaded CI
  // machine room for the marker's delivery and the maturation batch's wait.
  expect(Number(matured.late_ms)).toBeGreaterThanOrEqual(0);
  expect(Number(matured.late_ms)).toBeLessThan(2000);
  await Bun.sleep(1500);
  expect((await row("co-1")).maturation_count).toBe(1);
});

test("a key that expires while its session is still active (a lost trailing put) is re-armed: the session still matures on time", async () => {
  await send("co-2", 0);
  const { id } = await waitFor(() => row("co-2"), { what: "co-2 written" });
  // Stand in for a crash that lost the trailing put: the key now expires 1 s from here, while
  // the session's last write is only now.
  await stack.database.sql`update sessions set last_ingested_at = now() where id = ${id}`;
  await stack.nats.js.publish(
    activitySubject(stack.nats.topology, { kind: "session", pk: id, lane: activityLane(tenant.tenantId) }),
    "1",
    { ttl: "1s" },
  );
  const matured = await waitFor(
    async () => {
      const r = await row("co-2");
      return r?.published_count === 1 && r;
    },
    { what: "co-2 matured", timeoutMs: 20_000 },
  );
  expect(Number(matured.late_ms)).toBeGreaterThanOrEqual(0);
  expect(Number(matured.late_ms)).toBeLessThan(2500); // two marker deliveries, less than a window
  expect(matured.maturation_count).toBe(1);
});

test("a key written before lanes (`s.<pk>`, no lane token) still matures its session, through the unlaned marker consumer", async () => {
  await send("co-3", 0);
  const { id } = await waitFor(() => row("co-3"), { what: "co-3 written" });
  // As an older processor would have left it: the session's key without a lane (its laned key
  // removed, so that no marker of it comes), expiring 1 s from here.
  const { jsm, topology } = stack.nats;
  const stream = `KV_${topology.activityBucket}`;
  const laned = activitySubject(topology, { kind: "session", pk: id, lane: activityLane(tenant.tenantId) });
  // The write's put comes right after its commit: purge once it is there.
  await waitFor(() => jsm.streams.getMessage(stream, { last_by_subj: laned }).then(Boolean, () => false), {
    what: "the laned key put",
  });
  await jsm.streams.purge(stream, { filter: laned });
  await stack.nats.js.publish(activitySubject(stack.nats.topology, { kind: "session", pk: id, lane: null }), "1", {
    ttl: "1s",
  });
  const matured = await waitFor(
    async () => {
      const r = await row("co-3");
      return r?.published_count === 1 && r;
    },
    { what: "co-3 matured", timeoutMs: 20_000 },
  );
  expect(Number(matured.late_ms)).toBeGreaterThanOrEqual(0);
  expect(matured.maturation_count).toBe(1);
});
