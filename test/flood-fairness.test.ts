import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { activityStream, ingestStream, laneConsumerOf } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import { chatTrace, ingestTrace } from "./helpers/payloads";
import { createTestStack, type TestStack, waitFor } from "./helpers/stack";

// Issue 41: one tenant's backlog in the pipeline cannot delay another's maturation. INGEST is
// laned by tenant (shared/nats/catalogue.ts) and the processor's batches take the busy lanes in
// turn (shared/nats/consume/batch.ts); so is the maturation path (the second test). Bounded, not
// timed tightly: the machine is shared.
let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
});
afterAll(() => stack.stop());

const BACKLOG = 20_000;

/** One trace per session through /raw/traces with `key`, each answered 200. */
async function sendTraces(key: string, sessions: string[]) {
  for (const sessionId of sessions) {
    const res = await stack.ingestRequest(
      "/raw/traces",
      chatTrace({ sessionId, messages: [{ role: "user", content: "hi" }], reply: "hello" }),
      { authorization: `Bearer ${key}` },
    );
    expect(res.status).toBe(200);
  }
}

/** The flooding tenant's trace `n` as an INGEST message, in session `sessionOf(n)`. */
const floodTrace = (tenantId: string, prefix: string, n: number, sessionOf = (i: number) => `${prefix}-${i}`) =>
  ingestTrace({
    tenantId,
    messageId: `${prefix}-${n}`,
    sessionId: sessionOf(n),
    serviceName: "flood-svc",
    content: `q${n}`,
  });

/** A flooding tenant and a quiet one whose lanes of `stream` differ (re-drawn until they do). */
async function tenantsInTwoLanes(
  stream: typeof ingestStream | typeof activityStream,
  floodName: string,
  quietName: string,
) {
  const { db } = stack.database;
  const lane = (tenantId: string) => laneConsumerOf(stream, stack.nats.topology, tenantId).durable;
  const flood = await bootstrapTenant(db, { name: floodName });
  let quiet = await bootstrapTenant(db, { name: quietName });
  for (let i = 0; i < 50 && lane(quiet.tenantId) === lane(flood.tenantId); i++)
    quiet = await bootstrapTenant(db, { name: `${quietName}-${i}` });
  expect(lane(quiet.tenantId)).not.toBe(lane(flood.tenantId));
  return { flood, quiet };
}

test("a tenant's backlog of 20,000 INGEST messages does not delay another tenant's maturation", async () => {
  const { sql } = stack.database;
  const { js, topology } = stack.nats;
  const { flood, quiet } = await tenantsInTwoLanes(ingestStream, "flood", "quiet");

  // The flood's backlog waits in INGEST before the processor starts (20 sessions, so its own
  // maturations stay few: this measures the INGEST queue, not maturation work).
  const message = (n: number) => floodTrace(flood.tenantId, "flood", n, (i) => `flood-${i % 20}`);
  for (let n = 0; n < BACKLOG; n += 1000)
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        publish(js, topology, ingestStream, message(n + i), { msgID: `flood-${n + i}` }),
      ),
    );
  const processor = await stack.startProcessor({ ingestBatchSize: 200, ingestConcurrency: 1 });

  const sessions = Array.from({ length: 5 }, (_, i) => `quiet-${i}`);
  const sentAt = Date.now();
  await sendTraces(quiet.telemetryKey, sessions);
  const maturedAt = await waitFor(
    async () => {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from sessions
        where tenant_id = ${quiet.tenantId} and matured_at is not null`;
      return row.n === sessions.length && Date.now();
    },
    { what: "the quiet tenant's sessions matured", timeoutMs: 90_000, intervalMs: 200 },
  );
  const [{ stored }] = await sql<{ stored: number }[]>`
    select count(*)::int as stored from traces where tenant_id = ${flood.tenantId}`;
  console.log(
    `quiet tenant matured ${((maturedAt - sentAt) / 1000).toFixed(1)} s after sending (window 1 s); ` +
      `the flood's backlog: ${stored} of ${BACKLOG} written by then`,
  );
  // Its sessions did not wait behind the flood's backlog: that was still being written.
  expect(stored).toBeLessThan(BACKLOG);
  // And the flood's backlog is written in full afterwards (nothing lost to the lanes).
  await waitFor(
    async () => {
      const [row] = await sql<
        { n: number }[]
      >`select count(*)::int as n from traces where tenant_id = ${flood.tenantId}`;
      return row.n === BACKLOG;
    },
    { what: "the flood's backlog written", timeoutMs: 240_000, intervalMs: 500 },
  );
  await processor.stop();
}, 420_000);

// The maturation path is laned too (docs/maturation.md, "Tenant lanes"): activity keys carry
// their tenant's lane, each lane has its own marker consumer, a batch holds one lane's markers,
// and one lane's backlog holds at most its share of the batches and chunk slots. Before, markers
// were matured in expiry order by one consumer, so the quiet tenant's sessions waited for every
// marker of the flood's that fell due before them.
const SESSIONS = 4_000;

test("a tenant's backlog of 4,000 sessions due for maturation does not delay another tenant's maturation", async () => {
  const { sql } = stack.database;
  const { js, topology } = stack.nats;
  const { flood, quiet } = await tenantsInTwoLanes(activityStream, "flood-sessions", "quiet-sessions");
  // Maturation made slow on purpose (one chunk of 10 at a time per lane): the flood's 4,000
  // sessions and their traces take many seconds to mature, one window after they are written.
  const processor = await stack.startProcessor({ maturationConcurrency: 1, maturationChunk: 10, maturationBatches: 1 });
  const message = (n: number) => floodTrace(flood.tenantId, "fs", n);
  for (let n = 0; n < SESSIONS; n += 1000)
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        publish(js, topology, ingestStream, message(n + i), { msgID: `fs-${n + i}` }),
      ),
    );
  const count = async (tenantId: string, matured: boolean) => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from sessions
      where tenant_id = ${tenantId} and (${!matured} or matured_at is not null)`;
    return row.n;
  };
  await waitFor(async () => (await count(flood.tenantId, false)) === SESSIONS, {
    what: "the flood's sessions written",
    timeoutMs: 120_000,
    intervalMs: 200,
  });

  const sessions = Array.from({ length: 5 }, (_, i) => `quiet-m-${i}`);
  const sentAt = Date.now();
  await sendTraces(quiet.telemetryKey, sessions);
  const maturedAt = await waitFor(async () => (await count(quiet.tenantId, true)) === sessions.length && Date.now(), {
    what: "the quiet tenant's sessions matured",
    timeoutMs: 120_000,
    intervalMs: 100,
  });
  const floodMatured = await count(flood.tenantId, true);
  console.log(
    `quiet tenant matured ${((maturedAt - sentAt) / 1000).toFixed(1)} s after sending (window 1 s); ` +
      `the flood's sessions matured by then: ${floodMatured} of ${SESSIONS}`,
  );
  // Its sessions did not wait behind the flood's maturations: most of those were still to come.
  expect(floodMatured).toBeLessThan(SESSIONS * 0.75);
  // And every one of the flood's sessions matures in the end (nothing lost to the lanes).
  await waitFor(async () => (await count(flood.tenantId, true)) === SESSIONS, {
    what: "the flood's sessions matured",
    timeoutMs: 300_000,
    intervalMs: 500,
  });
  await processor.stop();
}, 480_000);

// The INGEST writes are laned too: each processor batch holds one tenant lane's messages, a lane
// runs at most 2 batches at once and 3 run in all (apps/processor/src/processor.ts,
// shared/nats/consume/lane-batch.ts), so a quiet lane always finds a slot and never shares a
// transaction with the flooder's items. Before, batches took every busy lane's messages in turn
// into 2 slots: the quiet tenant's items were written in the flooder's transactions, after its
// items, or waited for a slot the flooder's slow writes held.

/** Backends of this test's database waiting for a lock (the flooder's stalled writes). */
async function lockWaits(): Promise<number> {
  const [row] = await stack.database.sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'`;
  return row.n;
}

test("a tenant whose INGEST writes stall holds up none of another tenant's writes", async () => {
  const { sql } = stack.database;
  const { js, topology } = stack.nats;
  const { flood, quiet } = await tenantsInTwoLanes(ingestStream, "stall", "quiet-stall");
  const processor = await stack.startProcessor(); // the default INGEST batching

  // The flooder's writes stall: its service is being created by a transaction that has not
  // committed, so the processor's insert of that service waits on it (a slow write, made certain).
  await sql`insert into projects (tenant_id, name, is_default) values (${flood.tenantId}, 'default', true)
    on conflict do nothing`;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const holding = sql
    .begin(async (tx) => {
      const [project] = await tx<{ id: string }[]>`
        select id from projects where tenant_id = ${flood.tenantId} and is_default limit 1`;
      await tx`insert into trace_services (tenant_id, project_id, name) values (${flood.tenantId}, ${project.id}, 'flood-svc')`;
      await released;
      throw new Error("rolled back on purpose");
    })
    .catch(() => {});

  // Two of the flooder's messages, the second once the first is stalled: before, each took one
  // of the two batch slots.
  for (const n of [1, 2]) {
    await publish(js, topology, ingestStream, floodTrace(flood.tenantId, "stall", n), { msgID: `stall-${n}` });
    await waitFor(async () => (await lockWaits()) >= n, {
      what: `the flooder's write ${n} stalled`,
      timeoutMs: 30_000,
      intervalMs: 50,
    });
  }

  const sessions = Array.from({ length: 5 }, (_, i) => `quiet-stall-${i}`);
  await sendTraces(quiet.telemetryKey, sessions);
  const count = async (tenantId: string) => {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from traces where tenant_id = ${tenantId}`;
    return row.n;
  };
  // Written while the flooder's writes are still stalled (before: never, until they ended).
  await waitFor(async () => (await count(quiet.tenantId)) === sessions.length, {
    what: "the quiet tenant's traces written while the flooder's writes stall",
    timeoutMs: 20_000,
    intervalMs: 100,
  });
  expect(await count(flood.tenantId)).toBe(0);
  expect(await lockWaits()).toBeGreaterThanOrEqual(2);

  // The stall ends: the flooder's messages are written in full (nothing lost to the lanes).
  release();
  await holding;
  await waitFor(async () => (await count(flood.tenantId)) === 2, {
    what: "the flooder's traces written once the stall ended",
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  await processor.stop();
}, 180_000);
