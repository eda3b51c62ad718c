// The delivery state machine (shared/webhooks/delivery-state.ts): every named transition, from
// every status, on real rows, moves a delivery only along an edge of DELIVERY_TRANSITIONS, and
// each edge of the table is taken by some transition.
import { beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import {
  claimForResend,
  DELIVERY_TRANSITIONS,
  type DeliveryStatus,
  disableSubscriptionAndStop,
  mayFollow,
  reconcileOrphans,
  recordFailure,
  recordSuccesses,
  releaseClaim,
  stop,
} from "@cellar/shared/webhooks/delivery-state";
import { useTestDatabase } from "./helpers/test-database";

const db = useTestDatabase();
const at = new Date("2026-11-28T10:00:00Z");
let tenantId: string;
let subscriptionId: string;

beforeAll(async () => {
  const t = await bootstrapTenant(db.database.db, { name: "states", webhooks: true });
  tenantId = t.tenantId;
  const service = await createService(db.database.db, { tenantId, name: "svc" });
  const [sub] = await db.database.sql<{ id: string }[]>`
    insert into webhook_subscriptions (tenant_id, trace_service_id, name, url, event_types, secret_encrypted)
    values (${tenantId}, ${service.id}, 's', 'https://hooks.example.com/x', ${["session.matured"]}, 'sealed')
    returning id`;
  subscriptionId = sub.id;
});

const STATUSES = Object.keys(DELIVERY_TRANSITIONS) as DeliveryStatus[];
let n = 0;

/** A delivery row in `status`, created long ago (so reconcileOrphans takes a pending one). */
async function deliveryIn(status: DeliveryStatus): Promise<string> {
  const id = `msg_states_${++n}`;
  await db.database.sql`
    insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, status, created_at)
    values (${id}, ${tenantId}, ${subscriptionId}, 'session.matured', ${`session:${id}:1`}, '{}', ${at}, ${status},
      ${new Date(at.getTime() - 30 * 86400_000)})`;
  return id;
}
const statusOf = async (id: string) =>
  (await db.database.sql<{ status: DeliveryStatus }[]>`select status from webhook_deliveries where id = ${id}`)[0]
    .status;

const failure = (id: string, status: "pending" | "failed" | "stopped") => ({
  deliveryId: id,
  subscriptionId,
  attempt: 1,
  statusCode: 500,
  durationMs: 1,
  error: "HTTP 500",
  attemptedAt: at,
  status,
  nextAttemptAt: status === "pending" ? new Date(at.getTime() + 5_000) : null,
});

/**
 * Each transition as the dispatcher and the platform call it, on one row, tried from every status:
 * the attempt records too, because two attempts of one delivery can overlap (a redelivered job
 * while the first POST is in flight) and the later record must not move the row off the machine.
 */
const transitions: Record<string, (id: string) => Promise<unknown>> = {
  recordSuccesses: (id) =>
    recordSuccesses(db.database.sql, [
      { deliveryId: id, subscriptionId, attempt: 1, statusCode: 204, durationMs: 1, attemptedAt: at },
    ]),
  "recordFailure (retry)": (id) => recordFailure(db.database.sql, failure(id, "pending")),
  "recordFailure (failed)": (id) => recordFailure(db.database.sql, failure(id, "failed")),
  "recordFailure (stopped)": (id) => recordFailure(db.database.sql, failure(id, "stopped")),
  stop: (id) => stop(db.database.sql, id),
  disableSubscriptionAndStop: async (id) => {
    await disableSubscriptionAndStop(db.database.sql, subscriptionId, id, "gone", at);
    await db.database
      .sql`update webhook_subscriptions set enabled = true, disabled_reason = null where id = ${subscriptionId}`;
  },
  reconcileOrphans: () => reconcileOrphans(db.database.sql, at),
  claimForResend: (id) => claimForResend(db.database.sql, id, subscriptionId),
  "releaseClaim (to failed)": (id) => releaseClaim(db.database.sql, id, "failed"),
};

test("every transition, from every status, moves a delivery only along an edge of DELIVERY_TRANSITIONS; every edge is taken", async () => {
  const taken = new Set<string>();
  const moves: string[] = [];
  for (const [name, run] of Object.entries(transitions))
    for (const from of STATUSES) {
      const id = await deliveryIn(from);
      await run(id);
      const to = await statusOf(id);
      moves.push(`${name}: ${from} -> ${to}`);
      if (from !== to || from === "pending") taken.add(`${from}->${to}`);
      expect({ name, from, to, allowed: mayFollow(from, to) || from === to }).toEqual({
        name,
        from,
        to,
        allowed: true,
      });
    }
  const edges = STATUSES.flatMap((from) => DELIVERY_TRANSITIONS[from].map((to) => `${from}->${to}`));
  expect(edges.filter((e) => !taken.has(e))).toEqual([]);
  expect(moves).toContain("recordFailure (retry): pending -> pending");
  expect(moves).toContain("claimForResend: pending -> pending"); // a pending row cannot be claimed
  // A late failure leaves a delivered event delivered (else it would be sent again); a late
  // success ends a row that an overlapping attempt gave up on.
  expect(moves).toContain("recordFailure (retry): delivered -> delivered");
  expect(moves).toContain("recordFailure (failed): delivered -> delivered");
  expect(moves).toContain("recordSuccesses: failed -> delivered");
  expect(moves).toContain("recordSuccesses: stopped -> delivered");
});

test("a failure recorded after an overlapping attempt delivered the event keeps the attempt and the row delivered", async () => {
  const id = await deliveryIn("pending");
  await recordSuccesses(db.database.sql, [
    { deliveryId: id, subscriptionId, attempt: 2, statusCode: 204, durationMs: 1, attemptedAt: at },
  ]);
  await recordFailure(db.database.sql, { ...failure(id, "pending"), attempt: 3 });
  const [row] = await db.database.sql<{ status: string; attempts: number; next_attempt_at: Date | null }[]>`
    select status, attempts, next_attempt_at from webhook_deliveries where id = ${id}`;
  expect(row).toEqual({ status: "delivered", attempts: 2, next_attempt_at: null });
  const attempts = await db.database.sql<{ attempt: number; status_code: number }[]>`
    select attempt, status_code from webhook_attempts where delivery_id = ${id} order by attempt`;
  expect([...attempts]).toEqual([
    { attempt: 2, status_code: 204 },
    { attempt: 3, status_code: 500 },
  ]);
});
