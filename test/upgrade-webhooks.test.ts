import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { MIGRATIONS_DIR } from "@cellar/shared/db/client";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { stubDns } from "./helpers/dns";
import { withDatabaseBefore } from "./helpers/migrated-before";
import { createTestStack, type TestStack } from "./helpers/stack";
import { webhookApi } from "./helpers/webhooks";

/**
 * Upgrade without loss (issue 28, migration 0020): `webhook_deliveries` gets room on its pages
 * (fillfactor) and two foreign keys that repeated another one's cascade are dropped. Webhook
 * history written before answers byte for byte the same after, rows written before and after
 * keep moving through their transitions, and deleting a subscription or a tenant still removes
 * every delivery and attempt under it.
 */
let stack: TestStack;
let req: ReturnType<typeof webhookApi>;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  req = webhookApi(stack, { resolveDns: stubDns({ "hooks.example.com": ["93.184.216.34"] }, null) });
});
afterAll(() => stack.stop());

const DROPPED_KEYS = [
  ["webhook_deliveries", "webhook_deliveries_tenant_id_tenants_id_fk"],
  ["webhook_attempts", "webhook_attempts_subscription_id_webhook_subscriptions_id_fk"],
] as const;

/**
 * The two foreign keys as the migrations before 0020 define them, read from a scratch database
 * migrated only that far (so this holds whatever earlier migrations make of them).
 */
async function keysBefore0020(): Promise<Map<string, string>> {
  return withDatabaseBefore(20, async (sql) => {
    const rows = await sql<{ conname: string; def: string }[]>`
      select conname, pg_get_constraintdef(oid) as def from pg_constraint
      where conname = any(${DROPPED_KEYS.map(([, k]) => k)})`;
    return new Map(rows.map((r) => [r.conname, r.def]));
  });
}

/** The schema before 0020, on the migrated test database. */
async function undo0020() {
  const { sql } = stack.database;
  const defs = await keysBefore0020();
  expect(defs.size).toBe(DROPPED_KEYS.length);
  await sql`alter table webhook_deliveries reset (fillfactor)`;
  for (const [table, key] of DROPPED_KEYS)
    await sql.unsafe(`alter table ${table} add constraint ${key} ${defs.get(key)}`);
}

/** Migration 0020 as shipped, statement by statement. */
async function apply0020() {
  const text = readFileSync(join(MIGRATIONS_DIR, "0020_webhook_write_path.sql"), "utf8");
  for (const statement of text.split("--> statement-breakpoint")) await stack.database.sql.unsafe(statement);
}

/** A tenant with one subscription and webhook history in every delivery state. */
async function history(name: string) {
  const tenant = await bootstrapTenant(stack.database.db, { name, webhooks: true });
  const service = (await createService(stack.database.db, { tenantId: tenant.tenantId, name: "bot" })).id;
  const res = await req("/webhooks", tenant.platformKey, "POST", {
    trace_service_id: service,
    name: "ops",
    url: "https://hooks.example.com/cellar",
    event_types: ["session.matured", "trace.matured"],
  });
  expect(res.status).toBe(201);
  const sub = (await res.json()) as { id: string };
  const { sql } = stack.database;
  const at = new Date("2026-11-20T10:00:00Z");
  const ids = ["delivered", "retrying", "failed"].map((s) => `msg_${name}_${s}`);
  await deliveryState.insert(
    sql,
    ids.map((id, i) => ({
      id,
      tenant_id: tenant.tenantId,
      subscription_id: sub.id,
      event_type: "session.matured",
      event_key: `session:${name}:${i}`,
      body: `{"id":"${id}"}`,
      enqueued_at: at,
    })),
  );
  await deliveryState.recordSuccesses(sql, [
    { deliveryId: ids[0], subscriptionId: sub.id, attempt: 1, statusCode: 204, durationMs: 12, attemptedAt: at },
  ]);
  const failure = (deliveryId: string, status: "pending" | "failed", minute: number) =>
    deliveryState.recordFailure(sql, {
      deliveryId,
      subscriptionId: sub.id,
      attempt: 1,
      statusCode: 503,
      durationMs: 30,
      error: "HTTP 503",
      attemptedAt: new Date(at.getTime() + minute * 60_000),
      status,
      nextAttemptAt: status === "pending" ? new Date(at.getTime() + 3600_000) : null,
    });
  await failure(ids[1], "pending", 1);
  await failure(ids[2], "failed", 2);
  return { tenant, sub, ids };
}

/** Every webhook read of the tenant: status and exact body text. */
async function answers(key: string, subId: string): Promise<string[]> {
  const out: string[] = [];
  for (const path of ["/webhooks", `/webhooks/${subId}`, `/webhooks/${subId}/deliveries`]) {
    const res = await req(path, key);
    out.push(`GET ${path} -> ${res.status} ${await res.text()}`);
  }
  return out;
}

/** Deliveries and attempts under a subscription (a successful first attempt is kept in its delivery's row: 0035). */
const countsUnder = async (subId: string) =>
  (
    await stack.database.sql<{ deliveries: number; attempts: number }[]>`
      select (select count(*) from webhook_deliveries where subscription_id = ${subId})::int as deliveries,
        ((select count(*) from webhook_attempts where subscription_id = ${subId})
          + (select count(*) from webhook_deliveries where subscription_id = ${subId} and first_attempted_at is not null))::int as attempts`
  )[0];

test("webhook history written before 0020 answers the same after it, and keeps moving", async () => {
  await undo0020();
  const a = await history("before");
  const b = await history("gone");
  const before = await answers(a.tenant.platformKey, a.sub.id);
  expect(before.every((s) => / -> 200 /.test(s))).toBe(true);
  expect(before[2]).toContain("HTTP 503");

  await apply0020();
  const { sql } = stack.database;
  const [rel] = await sql<{ opts: string[] | null }[]>`
    select reloptions as opts from pg_class where relname = 'webhook_deliveries'`;
  expect(rel.opts).toContain("fillfactor=50");
  const fks = await sql<{ conname: string }[]>`
    select conname from pg_constraint where contype = 'f' and conrelid in ('webhook_deliveries'::regclass, 'webhook_attempts'::regclass)
    order by conname`;
  expect(fks.map((r) => r.conname)).toEqual([
    "webhook_attempts_delivery_id_webhook_deliveries_id_fk",
    "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk",
  ]);
  expect(await answers(a.tenant.platformKey, a.sub.id)).toEqual(before);
  await apply0020(); // a second run changes nothing
  expect(await answers(a.tenant.platformKey, a.sub.id)).toEqual(before);

  // A row written before finishes through the same transition as a new one.
  await deliveryState.recordSuccesses(sql, [
    {
      deliveryId: a.ids[1],
      subscriptionId: a.sub.id,
      attempt: 2,
      statusCode: 200,
      durationMs: 9,
      attemptedAt: new Date("2026-11-20T11:00:00Z"),
    },
  ]);
  const after = await answers(a.tenant.platformKey, a.sub.id);
  const attempts = JSON.parse(after[2].slice(after[2].indexOf("{"))) as {
    data: Array<{ delivery_id: string; attempt: number; status_code: number; delivery_status: string }>;
  };
  expect(attempts.data[0]).toMatchObject({
    delivery_id: a.ids[1],
    attempt: 2,
    status_code: 200,
    delivery_status: "delivered",
  });
  expect(attempts.data).toHaveLength(4);

  // Cascades still reach everything: a deleted subscription, then a deleted tenant.
  expect(await countsUnder(a.sub.id)).toEqual({ deliveries: 3, attempts: 4 });
  expect((await req(`/webhooks/${a.sub.id}`, a.tenant.platformKey, "DELETE")).status).toBeLessThan(300);
  expect(await countsUnder(a.sub.id)).toEqual({ deliveries: 0, attempts: 0 });
  expect(await countsUnder(b.sub.id)).toEqual({ deliveries: 3, attempts: 3 });
  await sql`delete from tenants where id = ${b.tenant.tenantId}`;
  expect(await countsUnder(b.sub.id)).toEqual({ deliveries: 0, attempts: 0 });
});
