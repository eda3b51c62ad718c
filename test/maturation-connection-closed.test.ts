import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { classifyFailure } from "@cellar/shared/nats/failure";
import { createLatencyNorms } from "../apps/processor/src/maturation/norms";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";
import { withDatabase } from "./helpers/infra";

// Under heavy load the corpus replay (npm run score) stopped on postgres.js's `write
// CONNECTION_CLOSED` and then hung in stack.stop(). A closed connection is a transient failure:
// the processor retries on a fresh connection, nothing is parked, lost or matured twice. Here the
// processor's backends are killed (pg_terminate_backend) over and over while sessions are
// written and matured. What stopped that replay was not the closed connection (the processor
// already retried it): a maturation read the latency baseline through the pool from inside its
// transaction; with every other connection waiting on its row locks it waited forever, and the
// CONNECTION_CLOSED came when the harness stopped Postgres under it.
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let admin: postgres.Sql;
let db: string;
const ownPools: postgres.Sql[] = [];

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
  [{ db }] = await stack.database.sql<{ db: string }[]>`select current_database() as db`;
  // A connection of the test's own, to the server's `postgres` database: not among those killed.
  admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await admin?.end({ timeout: 2 });
  await stack.stop();
  await Promise.all(ownPools.map((p) => p.end({ timeout: 2 })));
});

async function sendSessions(ids: string[]) {
  for (const sessionId of ids) {
    const r = await stack.ingestRequest(
      "/raw/traces",
      chatTrace({ sessionId, messages: [{ role: "user", content: `hi ${sessionId}` }], reply: "hello" }),
      { authorization: `Bearer ${tenant.telemetryKey}` },
    );
    expect(r.status).toBe(200);
  }
}

async function sessionsOf(ids: string[]) {
  return retrying(
    () => stack.database.sql<
      {
        session_id: string;
        status: string;
        maturation_count: number;
        published_count: number;
        maturation_failures: number;
        maturation_failed_at: Date | null;
      }[]
    >`
      select session_id, status, maturation_count, published_count, maturation_failures, maturation_failed_at
      from sessions where session_id = any(${ids}) order by session_id`,
  );
}

test("a maturation never waits for a pool connection while it holds row locks: a processor on a pool of one still matures", async () => {
  // Pool of one, the latency baseline uncached (as the corpus replay runs it): the read from
  // inside the maturation's transaction had no connection to wait for but its own.
  const pool = postgres(withDatabase(process.env.DATABASE_URL!, db), { max: 1, onnotice: () => {} });
  ownPools.push(pool);
  const p = await stack.startProcessor({ sql: pool, latencyNorms: createLatencyNorms(pool, { ttlMs: 0 }) });
  const ids = ["one-pool-a", "one-pool-b"];
  await sendSessions(ids);
  await waitFor(
    async () => (await sessionsOf(ids)).filter((r) => r.status === "matured" && r.published_count === 1).length === 2,
    { timeoutMs: 20_000, what: "both sessions matured on a pool of one" },
  );
  await p.stop();
}, 60_000);

test("a cold latency baseline is loaded before the maturation locks its sessions: ingest to them never waits for it", async () => {
  // The baseline reads the service's recent payloads: seconds under CPU starvation, which the
  // session's row lock was held for when it was read inside the maturation's transaction.
  const real = createLatencyNorms(stack.database.sql);
  const outside: boolean[] = [];
  const seen: { lockedWhileLoading: boolean | null } = { lockedWhileLoading: null };
  const p = await stack.startProcessor({
    latencyNorms: async (serviceId, config, via) => {
      outside.push(via === undefined);
      if (via === undefined && seen.lockedWhileLoading === null) {
        // Another transaction can take the session's row lock while the baseline loads.
        const rows = await stack.database.sql`
          select id from sessions where session_id = 'cold-norms' for no key update skip locked`;
        seen.lockedWhileLoading = rows.length === 0;
      }
      return real(serviceId, config, via);
    },
  });
  await sendSessions(["cold-norms"]);
  await waitFor(async () => (await sessionsOf(["cold-norms"]))[0]?.published_count === 1, {
    timeoutMs: 20_000,
    what: "the session matured",
  });
  await p.stop();
  expect(outside[0]).toBe(true);
  expect(seen.lockedWhileLoading).toBe(false);
}, 60_000);

/** A read of the test's that retries what a killed backend makes it fail with. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 50 || classifyFailure(err) !== "transient") throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test("the processor's Postgres connections killed again and again during ingest and maturation: every session matures exactly once, none parked", async () => {
  await stack.startProcessor();
  let killed = 0;
  let killing = true;
  const killer = (async () => {
    while (killing) {
      const rows = await admin<{ ok: boolean }[]>`
        select pg_terminate_backend(pid) as ok from pg_stat_activity
        where datname = ${db} and backend_type = 'client backend'`;
      killed += rows.filter((r) => r.ok).length;
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  const ids = Array.from({ length: 12 }, (_, i) => `killed-${i}`);
  try {
    await sendSessions(ids);
    // Keep killing through the maturations (window 1 s), then stop and let them finish.
    await new Promise((r) => setTimeout(r, 4_000));
  } finally {
    killing = false;
    await killer;
  }
  expect(killed).toBeGreaterThan(0);
  const rows = await waitFor(
    async () => {
      const rows = await sessionsOf(ids);
      return rows.length === ids.length && rows.every((r) => r.status === "matured" && r.published_count === 1) && rows;
    },
    { timeoutMs: 40_000, what: "every session matured and published" },
  );
  for (const r of rows) {
    expect({
      id: r.session_id,
      count: r.maturation_count,
      failures: r.maturation_failures,
      parked: r.maturation_failed_at,
    }).toEqual({ id: r.session_id, count: 1, failures: 0, parked: null });
  }
  // Nothing matured twice: still once each a little later (a retried maturation must not repeat).
  await new Promise((r) => setTimeout(r, 2_000));
  const again = await retrying(
    () => stack.database.sql<{ n: number }[]>`
      select count(*)::int as n from sessions where session_id = any(${ids}) and maturation_count = 1 and published_count = 1`,
  );
  expect(again[0].n).toBe(ids.length);
}, 90_000);
