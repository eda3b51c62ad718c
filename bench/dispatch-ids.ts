/**
 * `npm run bench -- dispatch-ids`: what a delivery id's shape costs the fan-out's insert on a
 * table at retention scale (issue 36 part 3). The primary key of `webhook_deliveries` starts with
 * the id: a fully random id (`msg_` + 24 random characters, before) puts each insert on a random
 * leaf of that index, a time-prefixed one of the same form (newDeliveryId now: 8 characters of
 * time, 16 random) on its right edge.
 *
 * Seeds --deliveries rows with random ids (as an install written before holds them; event keys
 * random as maturation keys are), then inserts rounds of --inserts rows through
 * deliveryState.insert, 50 a statement as the fan-out does, alternating random ids and
 * time-prefixed ids, each round right after a checkpoint. Postgres runs with full page writes on
 * (a production cluster's setting; the other benches turn them off): the first change of a page
 * after a checkpoint writes the whole page to the WAL, so a round's WAL shows how many pages the
 * inserts dirtied. Floor: the same rows inserted into a copy of the table without any index,
 * same round. Figures per 1,000 rows: Postgres CPU ms (from /proc), WAL bytes, wall ms.
 *
 *   npm run bench -- dispatch-ids [--deliveries 1000000] [--inserts 20000] [--rounds 2]
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { createService } from "@cellar/shared/admin/tenancy";
import { randomToken } from "@cellar/shared/crypto";
import { newDeliveryIds } from "@cellar/shared/webhooks/deliveries";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { runBench } from "./lib/harness";
import { cpuByProcess } from "./lib/proc";

const { values: args } = parseArgs({
  options: {
    deliveries: { type: "string", default: "1000000" },
    subscriptions: { type: "string", default: "500" },
    inserts: { type: "string", default: "20000" },
    rounds: { type: "string", default: "2" },
  },
});
const N = Number(args.deliveries);
const SUBS = Number(args.subscriptions);
const INSERTS = Number(args.inserts);
const ROUNDS = Number(args.rounds);
const BATCH = 50;

// As a production cluster runs: a page's first change after a checkpoint is a full image (the
// scratch cluster's flags turn this off; a later -c wins).
await runBench("dispatch-ids", { poolMax: 2, postgresSettings: { full_page_writes: "on" } }, async (bench) => {
  const { sql } = bench.database;
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
  console.log(`seeding ${N.toLocaleString("en")} deliveries with random ids ...`);
  const t0 = performance.now();
  for (let from = 0; from < N; from += 200_000) {
    const to = Math.min(N, from + 200_000);
    await sql`
      insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, status, attempts, created_at,
        first_attempt_id, first_status_code, first_duration_ms, first_attempted_at)
      select 'msg_' || substr(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), 1, 24),
        ${t.tenantId}, (${subs}::uuid[])[1 + i % ${subs.length}], 'trace.matured', 'trace:' || gen_random_uuid() || ':1',
        repeat('x', 300), now(), 'delivered', 1, now() - interval '1 day', uuidv7(), 200, 12, now()
      from generate_series(${from}::int, ${to - 1}::int) i`;
  }
  await sql`vacuum analyze webhook_deliveries`;
  // The floor's table: the same columns, no index at all.
  await sql`create table bare_deliveries (like webhook_deliveries including defaults)`;
  console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const [{ size }] = await sql<{ size: string }[]>`
    select pg_size_pretty(pg_relation_size('webhook_deliveries_pkey')) as size`;
  const [fpw] = await sql<{ full_page_writes: string }[]>`show full_page_writes`;
  const [comp] = await sql<{ wal_compression: string }[]>`show wal_compression`;
  console.log(
    `primary key index: ${size}; full_page_writes ${fpw.full_page_writes}, wal_compression ${comp.wal_compression}`,
  );

  const pgCpu = () => cpuByProcess({}, bench.pg.pid()).postgres ?? 0;
  const wal = async () => (await sql<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`)[0].lsn;
  const walBytes = async (from: string) =>
    Number(
      (await sql<{ b: string }[]>`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${from}::pg_lsn)::text as b`)[0]
        .b,
    );
  type Priced = { rows: number; wall_ms: number; pg_cpu_ms: number; wal_bytes: number };
  const price = async (run: () => Promise<void>): Promise<Priced> => {
    await sql`checkpoint`;
    const w = await wal();
    const c0 = pgCpu();
    const t = performance.now();
    await run();
    return {
      rows: INSERTS,
      wall_ms: performance.now() - t,
      pg_cpu_ms: (pgCpu() - c0) * 1000,
      wal_bytes: await walBytes(w),
    };
  };
  let seq = 0;
  const rowsWith = (ids: string[]) =>
    ids.map((id, k) => ({
      id,
      tenant_id: t.tenantId,
      subscription_id: subs[k % subs.length],
      event_type: "trace.matured",
      event_key: `trace:${crypto.randomUUID()}:${++seq}`,
      body: "x".repeat(300),
      enqueued_at: new Date(),
    }));
  /** Ids as the fan-out draws them: `draw(n)` for each statement of BATCH. */
  const insertRound = (draw: (n: number) => string[]) =>
    price(async () => {
      for (let i = 0; i < INSERTS; i += BATCH) await deliveryState.insert(sql, rowsWith(draw(BATCH)));
    });
  const bareRound = () =>
    price(async () => {
      for (let i = 0; i < INSERTS; i += BATCH) {
        const rows = rowsWith(newDeliveryIds(BATCH));
        const col = <K extends keyof (typeof rows)[0]>(k: K) => rows.map((r) => r[k]);
        await sql`
          insert into bare_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at)
          select * from unnest(${col("id")}::text[], ${col("tenant_id")}::uuid[], ${col("subscription_id")}::uuid[], ${col("event_type")}::text[],
            ${col("event_key")}::text[], ${col("body")}::text[], ${rows.map((r) => r.enqueued_at.toISOString())}::timestamptz[])`;
      }
    });
  const randomIds = (n: number) => Array.from({ length: n }, () => `msg_${randomToken(18)}`);
  const timeIds = (n: number) => newDeliveryIds(n);

  const results: Array<Record<string, Priced>> = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternated, so drift (the table growing, the machine's load) falls on both sides.
    const round: Record<string, Priced> = {};
    const order = r % 2 === 0 ? ["random", "time"] : ["time", "random"];
    for (const side of order) round[side] = await insertRound(side === "random" ? randomIds : timeIds);
    round.floor = await bareRound();
    results.push(round);
    console.log(`round ${r + 1} (${order.join(", ")}, then floor); load average ${loadavg()[0].toFixed(1)}`);
  }
  const per = (v: number) => (1000 * v) / INSERTS;
  console.log(
    `\n${INSERTS.toLocaleString("en")} rows a round, ${BATCH} a statement, on ${N.toLocaleString("en")} stored; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log("| round | ids | Postgres CPU ms per 1,000 | WAL KB per 1,000 | wall ms per 1,000 | CPU / floor |");
  console.log("|---|---|---|---|---|---|");
  for (const [i, round] of results.entries())
    for (const [side, v] of Object.entries(round))
      console.log(
        `| ${i + 1} | ${side} | ${per(v.pg_cpu_ms).toFixed(1)} | ${(per(v.wal_bytes) / 1024).toFixed(0)} | ${per(v.wall_ms).toFixed(1)} | ${(v.pg_cpu_ms / round.floor.pg_cpu_ms).toFixed(2)}x |`,
      );
  console.log(JSON.stringify(results));
});
