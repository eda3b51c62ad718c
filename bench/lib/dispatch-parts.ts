/**
 * bench/dispatch.ts's price list of one delivery, part by part, each beside a floor measured in
 * the same run: Postgres execution per statement (pg_stat_statements) against a bare insert of
 * the same rows into index-free copies of the tables; rows, updates (HOT or not) and WAL bytes
 * per delivery; and the app's own steps (body, signature) timed in the bench process.
 */
import type postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { deliveryBody, newDeliveryId } from "@cellar/shared/webhooks/deliveries";
import { deliveryHeaders, generateWebhookSecret } from "@cellar/shared/webhooks/signing";

const TABLES = ["webhook_deliveries", "webhook_attempts", "webhook_subscriptions"];

/** What a statement is, from its text (pg_stat_statements normalizes the parameters away). */
function label(q: string): string {
  const t = q.replace(/\s+/g, " ");
  if (t.includes("with ev as") && t.includes("insert into webhook_deliveries"))
    return "fan-out: one statement (subscriptions, delivery rows)";
  if (t.includes("from webhook_subscriptions s join tenants")) return "fan-out: subscriptions of the events";
  if (t.startsWith("insert into webhook_deliveries")) return "fan-out: delivery rows insert";
  if (t.includes("webhook_attempts") && t.includes("unnest")) return "success records (attempt + delivered)";
  if (t.includes("insert into webhook_attempts")) return "failure record";
  if (t.includes("from webhook_deliveries d join webhook_subscriptions")) return "delivery load (retries)";
  if (t.includes("floor_")) return "floor";
  return "other";
}

/** Postgres execution time per delivery, us, by what each statement does (bench's own queries left out). */
export async function statementsPerDelivery(sql: postgres.Sql, deliveries: number): Promise<Record<string, number>> {
  const rows = await sql<{ q: string; ms: number; calls: number }[]>`
    select query as q, total_exec_time as ms, calls::int from pg_stat_statements
    where query not like '%pg_stat%' and query not like 'select count(*)%' and query not like '%pg_current_wal%'`;
  const out: Record<string, number> = {};
  for (const r of rows) {
    const k = label(r.q);
    out[k] = (out[k] ?? 0) + (r.ms * 1000) / deliveries;
    // Statements per delivery: what batching buys (a batch of 200 is 0.005).
    out[`${k} (calls)`] = (out[`${k} (calls)`] ?? 0) + r.calls / deliveries;
  }
  out.total = Object.entries(out).reduce((a, [k, v]) => (k.endsWith("(calls)") ? a : a + v), 0);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Math.round(v * 1000) / 1000]));
}

type Writes = Record<string, { ins: number; upd: number; hot: number }> & { wal: { bytes: number } };

/** Row inserts, updates and HOT updates of the webhook tables so far, and the WAL position. */
export async function tableWrites(sql: postgres.Sql): Promise<Writes> {
  const rows = await sql<{ relname: string; ins: number; upd: number; hot: number }[]>`
    select relname, n_tup_ins::int as ins, n_tup_upd::int as upd, n_tup_hot_upd::int as hot
    from pg_stat_user_tables where relname = any(${TABLES})`;
  const [{ wal }] = await sql<
    { wal: string }[]
  >`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text as wal`;
  return Object.assign(Object.fromEntries(rows.map((r) => [r.relname, r])), { wal: { bytes: Number(wal) } }) as Writes;
}

/** Per delivery: rows inserted, updated (of them HOT) per table, and WAL bytes. */
export function tableDelta(a: Writes, b: Writes, deliveries: number): Record<string, number> {
  const per = (x: number) => Math.round((x / deliveries) * 100) / 100;
  const out: Record<string, number> = { wal_bytes: Math.round((b.wal.bytes - a.wal.bytes) / deliveries) };
  for (const t of TABLES) {
    const short = t.replace("webhook_", "");
    out[`${short}_ins`] = per((b[t]?.ins ?? 0) - (a[t]?.ins ?? 0));
    out[`${short}_upd`] = per((b[t]?.upd ?? 0) - (a[t]?.upd ?? 0));
    out[`${short}_hot`] = per((b[t]?.hot ?? 0) - (a[t]?.hot ?? 0));
  }
  return out;
}

/** Waits (bounded) until `n` delivery rows exist and none is pending: the success records landed. */
export async function waitForRecorded(sql: postgres.Sql, n: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const [{ done }] = await sql<{ done: boolean }[]>`
      select count(*) >= ${n} and count(*) filter (where status = 'pending') = 0 as done from webhook_deliveries`;
    if (done) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The floor for the rows: the same number of delivery and attempt rows (same body size, same
 * batches of 200) inserted into copies of the tables without indexes, keys or triggers. Returns
 * Postgres execution us per delivery and WAL bytes per delivery.
 */
export async function bareInsertFloor(
  sql: postgres.Sql,
  tenantId: string,
  deliveries: number,
): Promise<Record<string, number>> {
  await sql`create table if not exists floor_deliveries (like webhook_deliveries including defaults)`;
  await sql`create table if not exists floor_attempts (like webhook_attempts including defaults)`;
  const [sample] = await sql<{ subscription_id: string; body: string }[]>`
    select subscription_id, body from webhook_deliveries limit 1`;
  await sql`select pg_stat_statements_reset()`;
  const [{ wal: wal0 }] = await sql<
    { wal: string }[]
  >`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text as wal`;
  for (let i = 0; i < deliveries; i += 200) {
    const n = Math.min(200, deliveries - i);
    const ids = Array.from({ length: n }, () => newDeliveryId());
    const now = new Date().toISOString();
    const fill = <T>(v: T) => Array.from({ length: n }, () => v);
    await sql`
      insert into floor_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at)
      select * from unnest(${ids}::text[], ${fill(tenantId)}::uuid[], ${fill(sample.subscription_id)}::uuid[],
        ${fill("session.matured")}::text[], ${ids.map((id) => `session:${id}:1`)}::text[], ${fill(sample.body)}::text[],
        ${fill(now)}::timestamptz[])`;
    await sql`
      insert into floor_attempts (delivery_id, tenant_id, subscription_id, attempt, status_code, duration_ms, attempted_at)
      select * from unnest(${ids}::text[], ${fill(tenantId)}::uuid[], ${fill(sample.subscription_id)}::uuid[], ${fill(1)}::int[], ${fill(204)}::int[],
        ${fill(1)}::int[], ${fill(now)}::timestamptz[])`;
  }
  const [{ wal: wal1 }] = await sql<
    { wal: string }[]
  >`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text as wal`;
  const stats = await statementsPerDelivery(sql, deliveries);
  await sql`truncate floor_deliveries, floor_attempts`;
  return { exec_us: stats.floor ?? 0, wal_bytes: Math.round((Number(wal1) - Number(wal0)) / deliveries) };
}

/** The app's own steps per delivery, us, timed here: body + id, the signature as sent, and with a reused signer. */
export function appParts(n: number): Record<string, number> {
  const secrets = [generateWebhookSecret()];
  const data = {
    tenant_id: crypto.randomUUID(),
    trace_service_id: crypto.randomUUID(),
    service_name: "svc-0",
    maturation_count: 1,
    occurred_at: new Date().toISOString(),
    session_id: "s1",
  };
  const time = (f: (i: number) => unknown) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) f(i);
    return Math.round(((performance.now() - t0) * 1000 * 10) / n) / 10;
  };
  const at = new Date();
  const body = deliveryBody({ id: newDeliveryId(), type: "session.matured", timestamp: at, data });
  const signer = new Webhook(secrets[0]);
  return {
    body_and_id: time(() => deliveryBody({ id: newDeliveryId(), type: "session.matured", timestamp: at, data })),
    signed_headers: time((i) => deliveryHeaders(secrets, `msg_${i}`, at, body)),
    floor_reused_standardwebhooks_signer: time((i) => signer.sign(`msg_${i}`, at, body)),
  };
}
