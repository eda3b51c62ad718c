/**
 * `npm run bench -- dispatch-retention`: whether `webhook_deliveries` can do without its index on
 * created_at alone (issue 36 part 3). A delivery's insert keeps four index entries (key, dedup,
 * created_at, subscription + created_at); the hourly housekeeping (reconcile orphans, prune past
 * the retention: shared/webhooks/delivery-state.ts) is the created_at index's only reader.
 *
 * Seeds --deliveries rows over 31 days (in time order, as they are written) across
 * --subscriptions subscriptions (5 per service), 1 in 1,000 still pending, 1 in 50 with an
 * attempt row, then prices on that table:
 *   insert_with_index / insert_without_index: --inserts rows through deliveryState.insert, 50 a
 *     statement (the fan-out's insert), with the index and after dropping it;
 *   before:    one day's prune and the reconcile pass, delivery-state.ts's statements, with it;
 *   skip_scan: the same statements without it (Postgres 18 skip-scans (subscription_id,
 *     created_at) as a bitmap of every entry older than the cutoff, read again by each batch);
 *   after:     a prune that walks subscription by subscription on that index instead (the
 *     candidate statement, here only);
 *   floor:     a bare delete by key of as many rows (ids read beforehand).
 * Each prune takes a day of its own (the oldest first, then the next), so each deletes as many
 * rows from a table of nearly the same size. Figures: wall ms, Postgres CPU ms (from /proc), and
 * the buffers one batch's row selection touches (EXPLAIN ANALYZE, BUFFERS: the work, whatever
 * the machine's load).
 *
 *   npm run bench -- dispatch-retention [--deliveries 2000000] [--subscriptions 500] [--inserts 20000]
 */
import { parseArgs } from "node:util";
import { createService } from "@cellar/shared/admin/tenancy";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { fastSettings } from "./e2e/cluster";
import { runBench } from "./lib/harness";
import { cpuByProcess } from "./lib/proc";

const { values: args } = parseArgs({
  options: {
    deliveries: { type: "string", default: "2000000" },
    subscriptions: { type: "string", default: "500" },
    inserts: { type: "string", default: "20000" },
  },
});
const N = Number(args.deliveries);
const SUBS = Number(args.subscriptions);
const INSERTS = Number(args.inserts);
const DAY = 24 * 3600 * 1000;

await runBench("dispatch-retention", { poolMax: 2 }, async (bench) => {
  const { sql } = bench.database;
  await fastSettings(sql);
  const t = await bench.tenant({ webhooks: true, plan: "pro" });
  const subs: string[] = [];
  for (let s = 0; s < SUBS / 5; s++) {
    const svc = await createService(bench.database.db, { tenantId: t.tenantId, name: `svc-${s}` });
    const rows = await sql<{ id: string }[]>`
      insert into webhook_subscriptions (tenant_id, trace_service_id, name, url, event_types, secret_encrypted)
      select ${t.tenantId}, ${svc.id}, 'h' || k, 'https://hooks.example.com/' || k, ${["session.matured", "trace.matured"]}, 'sealed'
      from generate_series(1, 5) k returning id`;
    subs.push(...rows.map((r) => r.id));
  }
  const now = Date.now();
  const start = new Date(now - 31 * DAY);
  console.log(`seeding ${N.toLocaleString("en")} deliveries over 31 days across ${subs.length} subscriptions ...`);
  const t0 = performance.now();
  // In time order, as written; 1 in 1,000 still pending (older than the job lifetime: reconcile's
  // work), 1 in 50 with a failed attempt row before its success.
  for (let from = 0; from < N; from += 200_000) {
    const to = Math.min(N, from + 200_000);
    await sql`
      insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, status, attempts, created_at,
        first_attempt_id, first_status_code, first_duration_ms, first_attempted_at)
      select 'msg_' || lpad(i::text, 24, '0'), ${t.tenantId}, (${subs}::uuid[])[1 + i % ${subs.length}], 'trace.matured', 'trace:' || i,
        repeat('x', 300), c, case when i % 1000 = 7 then 'pending' else 'delivered' end, case when i % 1000 = 7 then 3 else 1 end, c,
        case when i % 50 = 0 or i % 1000 = 7 then null else uuidv7() end, 200, 12, c
      from generate_series(${from}::int, ${to - 1}::int) i,
        lateral (select ${start}::timestamptz + (i::float8 / ${N}) * interval '31 days' as c) t`;
    await sql`
      insert into webhook_attempts (delivery_id, tenant_id, subscription_id, attempt, status_code, duration_ms, error, attempted_at)
      select d.id, d.tenant_id, d.subscription_id, 1, 500, 9, 'HTTP 500', d.created_at from webhook_deliveries d
      where d.id >= ${`msg_${String(from).padStart(24, "0")}`} and d.id < ${`msg_${String(to).padStart(24, "0")}`}
        and d.first_attempt_id is null`;
  }
  await sql`vacuum analyze webhook_deliveries`;
  await sql`vacuum analyze webhook_attempts`;
  console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

  const pgCpu = () => cpuByProcess({}, bench.pg.pid()).postgres ?? 0;
  const buffers = async (query: string) => {
    const plan = await sql.unsafe<{ "QUERY PLAN": string }[]>(`explain (analyze, buffers, costs off) ${query}`);
    const text = plan.map((p) => p["QUERY PLAN"]).join("\n");
    // The top node's line: every buffer the selection touched, found in memory or read.
    const top = /Buffers: shared ([^\n]*)/.exec(text)?.[1] ?? "";
    const n = (k: string) => Number(new RegExp(`${k}=(\\d+)`).exec(top)?.[1] ?? 0);
    return { buffers: n("hit") + n("read"), plan: text };
  };
  const iso = (d: Date) => `'${d.toISOString()}'::timestamptz`;
  type Priced = { rows: number; wall_ms: number; pg_cpu_ms: number; batch_buffers: number };
  const price = async (run: () => Promise<number>): Promise<Priced> => {
    const c0 = pgCpu();
    const w0 = performance.now();
    const rows = await run();
    return {
      rows,
      wall_ms: Math.round(performance.now() - w0),
      pg_cpu_ms: Math.round((pgCpu() - c0) * 1000),
      batch_buffers: 0,
    };
  };

  const out: Record<string, Priced> = {};
  const orphansBefore = new Date(now - 4 * DAY);
  /** delivery-state.ts's statements (copied, to run each under EXPLAIN): old rows by created_at. */
  const byTime = {
    prune: (cutoff: Date) => `select id from webhook_deliveries where created_at < ${iso(cutoff)} limit 5000`,
    orphans: `select id from webhook_deliveries where status = 'pending' and created_at < ${iso(orphansBefore)} limit 5000`,
  };
  /** The candidate: old rows subscription by subscription (reconcile reads every old row either way). */
  const bySubscription = {
    prune: (cutoff: Date) =>
      `select d.id from webhook_subscriptions s cross join lateral (select id from webhook_deliveries d where d.subscription_id = s.id and d.created_at < ${iso(cutoff)} limit 5000) d limit 5000`,
    // Reconcile reads every old row either way (a seq scan now): unchanged.
    orphans: byTime.orphans,
  };
  /** The fan-out's insert (deliveryState.insert, 50 a statement): what one index entry less saves. */
  const inserts = async (name: string) => {
    const ids = Array.from({ length: INSERTS }, (_, i) => `msg_ins_${name}_${i}`);
    out[`insert_${name}`] = await price(async () => {
      for (let i = 0; i < ids.length; i += 50) {
        await deliveryState.insert(
          sql,
          ids.slice(i, i + 50).map((id, k) => ({
            id,
            tenant_id: t.tenantId,
            subscription_id: subs[(i + k) % subs.length],
            event_type: "trace.matured",
            event_key: `ins:${id}`,
            body: "x".repeat(300),
            enqueued_at: new Date(),
          })),
        );
      }
      return ids.length;
    });
  };
  const side = async (name: string, statements: typeof byTime, cutoff: Date) => {
    const b = await buffers(statements.prune(cutoff));
    const r = await buffers(statements.orphans);
    out[`reconcile_${name}`] = await price(async () => {
      const rows = await sql.unsafe(
        `update webhook_deliveries set status = 'failed', next_attempt_at = null where id in (${statements.orphans}) returning 1`,
      );
      return rows.length;
    });
    out[`reconcile_${name}`].batch_buffers = r.buffers;
    out[`prune_${name}`] = await price(async () => {
      let total = 0;
      for (;;) {
        const rows = await sql.unsafe(
          `delete from webhook_deliveries where id in (${statements.prune(cutoff)}) returning 1`,
        );
        total += rows.length;
        if (rows.length < 5000) return total;
      }
    });
    out[`prune_${name}`].batch_buffers = b.buffers;
    console.log(`${name}, one prune batch's selection:\n${b.plan}\n${name}, reconcile's selection:\n${r.plan}`);
    // The orphans back to pending, for the next side to find.
    await sql`update webhook_deliveries set status = 'pending' where attempts = 3 and status = 'failed'`;
  };
  // With the created_at index; then without it, Postgres' own plan for the same statements (a
  // skip scan), and the candidate (subscription by subscription).
  await inserts("with_index");
  await side("before", byTime, new Date(start.getTime() + DAY));
  await sql`drop index webhook_deliveries_created_idx`;
  await sql`analyze webhook_deliveries`;
  await inserts("without_index");
  await side("skip_scan", byTime, new Date(start.getTime() + 2 * DAY));
  await side("after", bySubscription, new Date(start.getTime() + 3 * DAY));

  // floor: a bare delete by key of as many rows (the next day's, ids read beforehand).
  const cut3 = new Date(start.getTime() + 4 * DAY);
  const ids = (
    await sql<{ id: string; tenant_id: string }[]>`
      select id, tenant_id from webhook_deliveries where subscription_id = any(${subs}::uuid[]) and created_at < ${cut3}`
  ).map((r) => r.id);
  out.prune_floor = await price(async () => {
    let total = 0;
    for (let i = 0; i < ids.length; i += 5000) {
      const r = await sql`delete from webhook_deliveries where id = any(${ids.slice(i, i + 5000)}::text[]) returning 1`;
      total += r.length;
    }
    return total;
  });

  const [{ n: left }] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
  console.log(
    `\n${left.toLocaleString("en")} deliveries left; load average ${(await import("node:os"))
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log("| step | rows | wall ms | Postgres CPU ms | per 1,000 rows (CPU ms) | one batch's selection, buffers |");
  console.log("|---|---|---|---|---|---|");
  for (const [k, v] of Object.entries(out))
    console.log(
      `| ${k} | ${v.rows} | ${v.wall_ms} | ${v.pg_cpu_ms} | ${v.rows ? ((1000 * v.pg_cpu_ms) / v.rows).toFixed(1) : "-"} | ${v.batch_buffers || "-"} |`,
    );
  console.log(JSON.stringify(out));
});
