// The delivery history with first attempts folded into the delivery row (migration 0035): what
// recordSuccesses folds and what it keeps as an attempt row, and that the history read over both
// places answers exactly what the read of the attempts table alone answered when every attempt
// was a row (the oracle: the folded attempts moved back into webhook_attempts, same ids).
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { deliveryHistory } from "@cellar/shared/webhooks/delivery-history";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { useTestDatabase } from "./helpers/test-database";

const db = useTestDatabase();
let tenantId: string;
let serviceId: string;
const T0 = new Date("2026-11-20T10:00:00Z").getTime();

beforeAll(async () => {
  const tenant = await bootstrapTenant(db.database.db, { name: "hist", webhooks: true });
  tenantId = tenant.tenantId;
  serviceId = (await createService(db.database.db, { tenantId, name: "svc" })).id;
});

async function subscription(): Promise<string> {
  const [row] = await db.database.sql<{ id: string }[]>`
    insert into webhook_subscriptions (tenant_id, trace_service_id, name, url, event_types, secret_encrypted)
    values (${tenantId}, ${serviceId}, 'h', 'https://hooks.example.com/h', ${["session.matured"]}, 'sealed')
    returning id`;
  return row.id;
}

/** A delivery created at `createdAtMs` (the row's clock is the database's: set it afterwards). */
async function delivery(subscriptionId: string, createdAtMs: number): Promise<string> {
  const id = `msg_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const { sql } = db.database;
  await deliveryState.insert(sql, [
    {
      id,
      tenant_id: tenantId,
      subscription_id: subscriptionId,
      event_type: "session.matured",
      event_key: `session:${id}:1`,
      body: "{}",
      enqueued_at: new Date(createdAtMs),
    },
  ]);
  await sql`update webhook_deliveries set created_at = ${new Date(createdAtMs)} where id = ${id}`;
  return id;
}

const success = (deliveryId: string, subscriptionId: string, attempt: number, atMs: number) => ({
  deliveryId,
  subscriptionId,
  attempt,
  statusCode: 200 + attempt,
  durationMs: 5 + attempt,
  attemptedAt: new Date(atMs),
});

async function failure(deliveryId: string, subscriptionId: string, attempt: number, atMs: number) {
  await deliveryState.recordFailure(db.database.sql, {
    deliveryId,
    subscriptionId,
    attempt,
    statusCode: 500,
    durationMs: 7,
    error: "HTTP 500",
    attemptedAt: new Date(atMs),
    status: "pending",
    nextAttemptAt: new Date(atMs + 5000),
  });
}

/** The read before migration 0035, over the attempts table alone. */
const attemptsTableRead = (subscriptionId: string, limit: number) => db.database.sql`
  select a.id, a.delivery_id, d.event_type, d.status as delivery_status, a.attempt, a.status_code, a.duration_ms, a.error, a.attempted_at
  from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
  where a.subscription_id = ${subscriptionId}
  order by a.attempted_at desc, a.attempt desc limit ${limit}`;

/** Every folded attempt moved back into an attempts row, with its id (the stored shape before 0035). */
async function unfold(subscriptionId: string) {
  const { sql } = db.database;
  await sql`insert into webhook_attempts (id, delivery_id, tenant_id, subscription_id, attempt, status_code, duration_ms, attempted_at)
    select first_attempt_id, id, tenant_id, subscription_id, 1, first_status_code, first_duration_ms, first_attempted_at
    from webhook_deliveries where subscription_id = ${subscriptionId} and first_attempted_at is not null`;
  await sql`update webhook_deliveries set first_attempt_id = null, first_status_code = null, first_duration_ms = null,
    first_attempted_at = null where subscription_id = ${subscriptionId}`;
}

const attemptRows = async (deliveryId: string) =>
  (
    await db.database.sql<
      { n: number }[]
    >`select count(*)::int as n from webhook_attempts where delivery_id = ${deliveryId}`
  )[0].n;

describe("delivery history", () => {
  test("a first attempt that succeeds within the window is kept in the delivery row; any other is a row", async () => {
    const { sql } = db.database;
    const sub = await subscription();
    const quick = await delivery(sub, T0);
    const late = await delivery(sub, T0);
    const retried = await delivery(sub, T0);
    await failure(retried, sub, 1, T0 + 1000);
    await deliveryState.recordSuccesses(sql, [
      success(quick, sub, 1, T0 + 29_000),
      success(late, sub, 1, T0 + 31_000),
      success(retried, sub, 2, T0 + 7000),
    ]);
    expect(await attemptRows(quick)).toBe(0);
    expect(await attemptRows(late)).toBe(1);
    expect(await attemptRows(retried)).toBe(2);
    const [folded] =
      await sql`select status, attempts, first_status_code, first_duration_ms, first_attempted_at, first_attempt_id
      from webhook_deliveries where id = ${quick}`;
    expect(folded).toMatchObject({
      status: "delivered",
      attempts: 1,
      first_status_code: 201,
      first_duration_ms: 6,
      first_attempted_at: new Date(T0 + 29_000),
    });
    expect(folded.first_attempt_id).toMatch(/^[0-9a-f-]{36}$/);

    // Recorded twice (two processes raced on one delivery): kept once, where it was first put.
    await deliveryState.recordSuccesses(sql, [success(quick, sub, 1, T0 + 29_500), success(late, sub, 1, T0 + 31_500)]);
    expect(await attemptRows(quick)).toBe(0);
    expect(await attemptRows(late)).toBe(1);
    const [again] = await sql`select first_attempt_id, first_attempted_at from webhook_deliveries where id = ${quick}`;
    expect(again).toEqual({ first_attempt_id: folded.first_attempt_id, first_attempted_at: new Date(T0 + 29_000) });

    const history = await deliveryHistory(sql, sub, 10);
    expect(history.map((h) => [h.delivery_id, h.attempt, h.status_code, h.error])).toEqual([
      [late, 1, 201, null],
      [quick, 1, 201, null],
      [retried, 2, 202, null],
      [retried, 1, 500, "HTTP 500"],
    ]);
    expect(history[1].id).toBe(folded.first_attempt_id);
  });

  test("a manual re-send of a delivery whose first attempt was folded adds attempt 2 as a row; both show", async () => {
    const { sql } = db.database;
    const sub = await subscription();
    const id = await delivery(sub, T0);
    await deliveryState.recordSuccesses(sql, [success(id, sub, 1, T0 + 1000)]);
    expect(await deliveryState.claimForResend(sql, id, sub)).toEqual({ attempts: 1, previousStatus: "delivered" });
    expect((await deliveryHistory(sql, sub, 10)).map((h) => h.delivery_status)).toEqual(["pending"]);
    await deliveryState.recordSuccesses(sql, [success(id, sub, 2, T0 + 60_000)]);
    expect(await attemptRows(id)).toBe(1);
    expect((await deliveryHistory(sql, sub, 10)).map((h) => [h.attempt, h.status_code, h.delivery_status])).toEqual([
      [2, 202, "delivered"],
      [1, 201, "delivered"],
    ]);
  });

  test("the history over both places answers as the attempts table alone did (generated histories)", async () => {
    // Per delivery: when it was created, and its attempts' starts after that (failures, then maybe
    // a success), in whole seconds plus a millisecond count unique per attempt (under 1000), so
    // no two attempts start at once and the order has no ties.
    const plan = fc.array(
      fc.record({
        createdAt: fc.integer({ min: 0, max: 600 }).map((s) => s * 1000),
        failures: fc.integer({ min: 0, max: 3 }),
        succeeds: fc.boolean(),
        delay: fc.integer({ min: 0, max: 40 }).map((s) => s * 1000),
      }),
      { minLength: 0, maxLength: 30 },
    );
    await fc.assert(
      fc.asyncProperty(plan, fc.constantFrom(1, 3, 10), async (deliveries, limit) => {
        const { sql } = db.database;
        const sub = await subscription();
        let tick = 0;
        for (const d of deliveries) {
          const id = await delivery(sub, T0 + d.createdAt);
          let at = T0 + d.createdAt + d.delay;
          for (let a = 1; a <= d.failures; a++) await failure(id, sub, a, (at += 1000) + ++tick);
          if (d.succeeds)
            await deliveryState.recordSuccesses(sql, [success(id, sub, d.failures + 1, at + 1000 + ++tick)]);
        }
        const now = await deliveryHistory(sql, sub, limit);
        await unfold(sub);
        expect(now).toEqual([...(await attemptsTableRead(sub, limit))] as unknown as typeof now);
      }),
      { numRuns: 40 },
    );
  });
});
