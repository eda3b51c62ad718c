/**
 * `npm run bench -- dispatch-price`: one webhook delivery priced step by step (issue 36 part 3),
 * each step beside a floor measured in the same round:
 *
 * | step                                                   | floor                                           |
 * | fan-out: subscriptions of a batch of events, delivery   | a bare insert of as many rows (index-free copy |
 * |   rows inserted (apps/dispatcher/src/fanout.ts)          |   of the table, one unnest per batch)          |
 * | the signed POST: address check, secret, signature,      | a bare signed POST of the same body to the     |
 * |   pinned fetch, answer prefix (attempt.ts's send)        |   same receiver, same concurrency               |
 * | the success record: attempt, delivered, health          | a bare insert of one row per delivery          |
 * |   (shared/webhooks/delivery-state.ts recordSuccesses)     |   (index-free copy, one unnest per batch)       |
 * | the DELIVERIES message: publishDeliveryJobs (msg id),   | a bare publish of the same bytes to a scratch  |
 * |   then pulled and acked                                  |   stream, pulled and acked                      |
 *
 * Each figure is CPU microseconds per delivery, summed over the processes that do the work (this
 * process, Postgres with its backends, NATS, the receiver, from /proc), and for the Postgres steps
 * the statements' execution time (pg_stat_statements: wall time, so it swells when the machine is
 * loaded; the CPU figure does not), statements and WAL bytes per delivery. The machine is
 * shared, so rounds alternate step and floor and the report gives each round and the median ratio.
 * Nothing here depends on the stored shape, so the same file prices an older tree.
 *
 *   npm run bench -- dispatch-price [--deliveries 3000] [--batch 50] [--rounds 3] [--concurrency 32]
 */
import { parseArgs } from "node:util";
import { AckPolicy, DeliverPolicy, type JetStreamClient, StorageType } from "@nats-io/jetstream";
import { randomBytes, SecretBox, toBase64 } from "@cellar/shared/crypto";
import { createLogger } from "@cellar/shared/logger";
import { maturedStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import { connectNats, createTopology, ensureTopology, type Topology } from "@cellar/shared/nats/topology";
import { maturationKey, type MaturedMessage } from "@cellar/shared/payloads";
import { toCidrs } from "@cellar/shared/webhooks/address";
import { publishDeliveryJobs } from "@cellar/shared/webhooks/deliveries";
import { recordSuccesses, type SuccessRecord } from "@cellar/shared/webhooks/delivery-state";
import { deliveryHeaders, generateWebhookSecret } from "@cellar/shared/webhooks/signing";
import { attemptDelivery, type AttemptDeps, type Loaded } from "../apps/dispatcher/src/attempt";
import { createDispatcher } from "../apps/dispatcher/src/dispatcher";
import { fanOut } from "../apps/dispatcher/src/fanout";
import { cachedSecretOpener } from "../apps/dispatcher/src/resources";
import { pinnedFetch } from "../apps/dispatcher/src/pinned-fetch";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { statementsPerDelivery, tableDelta, tableWrites } from "./lib/dispatch-parts";
import { runBench } from "./lib/harness";
import { cpuByProcess, cpuDelta, postmasterPid } from "./lib/proc";
import { seedService, seedWebhookSubscription } from "./lib/seed";
import { chunks } from "./lib/sessions";

const { values: args } = parseArgs({
  options: {
    deliveries: { type: "string", default: "3000" },
    batch: { type: "string", default: "50" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "32" },
    services: { type: "string", default: "5" },
    rate: { type: "string", default: "300" },
    "paced-seconds": { type: "string", default: "10" },
    "stored-deliveries": { type: "string", default: "200000" },
  },
});
const N = Number(args.deliveries);
const BATCH = Number(args.batch);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const SERVICES = Number(args.services);
const RATE = Number(args.rate);
const PACED_SECONDS = Number(args["paced-seconds"]);

/** Each step's floor, by name. */
const FLOORS = {
  fan_out: "bare_insert",
  signed_post: "bare_signed_post",
  success_record: "bare_insert",
  deliveries_message: "bare_publish",
  whole_paced: "bare_insert_post_publish",
} as const;
type Step = keyof typeof FLOORS;
interface Priced {
  cpu_us: number;
  by_process: Record<string, number>;
  per_s: number;
  pg_exec_wall_us: number;
  /** Postgres statements per delivery, and WAL bytes per delivery (both exact). */
  statements: number;
  wal_bytes: number;
  /** Deliveries handed to DELIVERIES per delivery (the paced step). */
  handed_on?: number;
  /** Postgres execution (wall) us and calls per delivery by what the statement does. */
  by_statement: Record<string, number>;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round1 = (x: number) => Math.round(x * 10) / 10;

/** Runs `work` at most `limit` at a time over `items`. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

async function main() {
  await runBench(
    "dispatch-price",
    { nats: true, poolMax: 10, postgresSettings: { shared_preload_libraries: "pg_stat_statements" } },
    async (bench) => {
      const nats = bench.nats!;
      const port = await freePort();
      const receiver = bench.spawnScript(["bench/dispatch.ts", "--receiver", String(port)], { stdio: "inherit" });
      await waitForPort(port);
      const { sql } = bench.database;
      await sql`create extension if not exists pg_stat_statements`;
      const nc = await connectNats(nats.url, "bench-dispatch-price");
      const topology: Topology = createTopology("price");
      const { js } = await ensureTopology(nc, topology);
      const jsm = await js.jetstreamManager();
      await jsm.streams.add({ name: "FLOOR", subjects: ["floor.>"], storage: StorageType.File });
      const secretBox = new SecretBox(toBase64(randomBytes(32)));
      const tenant = await bench.tenant({ webhooks: true });
      const services: Array<{ id: string; name: string }> = [];
      for (let i = 0; i < SERVICES; i++) {
        const svc = await seedService(bench.database.db, tenant.tenantId, `svc-${i}`);
        services.push({ id: svc.id, name: `svc-${i}` });
        await seedWebhookSubscription({ sql, secretBox }, tenant, {
          traceServiceId: svc.id,
          name: `hook-${i}`,
          url: `http://127.0.0.1:${port}/hook/${i}`,
          eventTypes: ["session.matured", "trace.matured"],
        });
      }
      await sql`create table if not exists floor_rows (like webhook_deliveries including defaults)`;
      // History already stored (delivered, a day old): on a near-empty table the planner reads
      // the whole table for a batch's rows, which a table of any real size never does.
      await sql`
        insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, status, attempts, created_at)
        select 'msg_old' || g, ${tenant.tenantId}, s.id, 'session.matured', 'old:' || g, repeat('x', 300), now() - interval '1 day',
          'delivered', 1, now() - interval '1 day'
        from generate_series(1, ${Number(args["stored-deliveries"])}) g
        join lateral (select id from webhook_subscriptions order by id offset g % ${SERVICES} limit 1) s on true`;
      await sql`analyze`;
      const pm = postmasterPid(`${bench.scratch}/pg`);
      const cpu = () => cpuByProcess({ bench: [process.pid], nats: [nats.process.pid], receiver: [receiver.pid] }, pm);
      /** CPU us per delivery of `work`, by process and in total, and what Postgres executed. */
      const priced = async (work: () => Promise<unknown>, n = N): Promise<Priced> => {
        await sql`select pg_stat_statements_reset()`;
        const t0 = await tableWrites(sql);
        const c0 = cpu();
        const w0 = performance.now();
        await work();
        const wallMs = performance.now() - w0;
        const d = cpuDelta(c0, cpu());
        const byProcess = Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round1((v * 1e6) / n)]));
        const total = round1(Object.values(d).reduce((a, b) => a + b, 0) * (1e6 / n));
        const statements = await statementsPerDelivery(sql, n);
        return {
          cpu_us: total,
          by_process: byProcess,
          per_s: Math.round(n / (wallMs / 1000)),
          pg_exec_wall_us: statements.total,
          statements: Object.entries(statements)
            .filter(([k]) => k.endsWith("(calls)"))
            .reduce((a, [, v]) => a + v, 0),
          wal_bytes: tableDelta(t0, await tableWrites(sql), n).wal_bytes,
          by_statement: Object.fromEntries(Object.entries(statements).filter(([k, v]) => k !== "total" && v !== 0)),
        };
      };

      const attemptDeps: AttemptDeps = {
        sql,
        logger: createLogger("error"),
        openSecret: cachedSecretOpener(secretBox),
        recordSuccess: async () => {},
        fetch: pinnedFetch,
        resolveDns: async (host) => [host],
        allowlist: toCidrs("127.0.0.0/8"),
        literalCache: new Map(),
        now: () => new Date(),
        retryTimeScale: 1,
        timeoutMs: 15_000,
        random: Math.random,
      };
      const floorSecrets = [generateWebhookSecret()];
      let seq = 0;
      const events = (): MaturedMessage[] =>
        Array.from({ length: N }, () => {
          const i = seq++;
          const svc = services[i % services.length];
          const common = {
            tenantId: tenant.tenantId,
            traceServiceId: svc.id,
            serviceName: svc.name,
            entityPk: crypto.randomUUID(),
            maturationCount: 1,
            occurredAt: new Date().toISOString(),
          };
          return (
            i % 5
              ? { ...common, type: "trace.matured", traceId: `t${i}` }
              : { ...common, type: "session.matured", sessionId: `s${i}` }
          ) as MaturedMessage;
        });

      const bareInsert = async (rows: Array<{ id: string; subscription_id: string; body: string }>) => {
        for (const part of chunks(rows, BATCH)) {
          const fill = <T>(v: T) => part.map(() => v);
          await sql`
            insert into floor_rows (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at)
            select * from unnest(${part.map((r) => r.id)}::text[], ${fill(tenant.tenantId)}::uuid[], ${part.map((r) => r.subscription_id)}::uuid[],
              ${fill("session.matured")}::text[], ${part.map((r) => `floor:${r.id}`)}::text[], ${part.map((r) => r.body)}::text[],
              ${fill(new Date().toISOString())}::timestamptz[])`;
        }
        await sql`truncate floor_rows`;
      };
      /** Pulls `n` messages of `stream` (a fresh consumer) and acks each. */
      const pullAndAck = async (stream: string, n: number) => {
        const name = `price-${seq++}`;
        await jsm.consumers.add(stream, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.New,
        });
        return { name, take: () => take(js, stream, name, n) };
      };

      const rounds: Array<Record<Step, { step: Priced; floor: Priced }>> = [];
      let runStart = await tableWrites(sql);
      for (let r = 0; r <= ROUNDS; r++) {
        // 1. Fan-out, beside a bare insert of as many rows.
        const fanned: Loaded[] = [];
        const fan = await priced(async () => {
          for (const part of chunks(events(), BATCH))
            for (const d of await fanOut({ sql, now: () => new Date(), attemptLeaseMs: 30_000 }, part))
              if (d.row) fanned.push(d.row);
        });
        if (fanned.length !== N) throw new Error(`fan-out made ${fanned.length} of ${N} deliveries`);
        const fanFloor = await priced(() =>
          bareInsert(fanned.map((d) => ({ id: `f${d.id}`, subscription_id: d.subscription_id, body: d.body }))),
        );

        // 2. The signed POST (attempt.ts's send; its record collected, not written), beside a bare signed POST.
        const successes: SuccessRecord[] = [];
        const deps = { ...attemptDeps, recordSuccess: async (rec: SuccessRecord) => void successes.push(rec) };
        const post = await priced(() => pool(fanned, CONCURRENCY, (row) => attemptDelivery(deps, row, false)));
        if (successes.length !== N) throw new Error(`${successes.length} of ${N} POSTs succeeded`);
        const postFloor = await priced(() =>
          pool(fanned, CONCURRENCY, async (row) => {
            const at = new Date();
            const res = await fetch(`http://127.0.0.1:${port}/hook/floor`, {
              method: "POST",
              headers: deliveryHeaders(floorSecrets, row.id, at, row.body),
              body: row.body,
              redirect: "manual",
            });
            await res.arrayBuffer();
          }),
        );
        await fetch(`http://127.0.0.1:${port}/stats`); // the receiver forgets what it kept

        // 3. The success record, beside a bare insert of one row per delivery.
        const record = await priced(async () => {
          for (const part of chunks(successes, BATCH)) await recordSuccesses(sql, part);
        });
        const recordFloor = await priced(() =>
          bareInsert(fanned.map((d) => ({ id: `r${d.id}`, subscription_id: d.subscription_id, body: "" }))),
        );

        // 4. The DELIVERIES message (published with its message id, pulled, acked), beside a bare publish.
        const jobs = await pullAndAck(topology.deliveriesStream, N);
        const message = await priced(async () => {
          await Promise.all(
            chunks(fanned, 100).map((part) =>
              publishDeliveryJobs(
                js,
                topology,
                part.map((d) => ({ job: { deliveryId: d.id, tenantId: d.tenant_id }, msgID: `${d.id}:a1` })),
              ),
            ),
          );
          await jobs.take();
        });
        await jsm.consumers.delete(topology.deliveriesStream, jobs.name);
        const bare = await pullAndAck("FLOOR", N);
        const messageFloor = await priced(async () => {
          await Promise.all(
            chunks(fanned, 100).map((part) =>
              Promise.all(
                part.map((d) => js.publish("floor.x", JSON.stringify({ deliveryId: d.id, tenantId: d.tenant_id }))),
              ),
            ),
          );
          await bare.take();
        });
        await jsm.consumers.delete("FLOOR", bare.name);
        // Those jobs are for delivered rows: the dispatcher below must not spend the paced step on them.
        await jsm.streams.purge(topology.deliveriesStream);

        // 5. The whole path, paced: the dispatcher (in this process) takes MATURED at RATE/s (trace
        // maturations in a batch message every 100 ms, as the processor publishes them; one session
        // per 5 traces), until every delivery has arrived and is recorded. Its floor: the three
        // floors above together (a bare insert, a bare signed POST, a bare publish per delivery).
        const dispatcher = createDispatcher({
          sql,
          js,
          topology,
          logger: createLogger("error"),
          secretBox,
          insecureAllowlist: "127.0.0.0/8",
        });
        await dispatcher.start();
        const pacedEvents = events().slice(0, RATE * PACED_SECONDS);
        const jobsSoFar = async () => (await jsm.streams.info(topology.deliveriesStream)).state.last_seq;
        const jobs0 = await jobsSoFar();
        const [{ pacedFrom }] = await sql<{ pacedFrom: Date }[]>`select now() as "pacedFrom"`;
        const whole = await priced(async () => {
          const t0 = performance.now();
          const ticks = chunks(pacedEvents, Math.max(1, Math.round(RATE / 10)));
          for (const [k, tick] of ticks.entries()) {
            const due = t0 + k * 100 - performance.now();
            if (due > 0) await Bun.sleep(due);
            const traces = tick.filter((e) => e.type === "trace.matured");
            await Promise.all([
              ...tick
                .filter((e) => e.type !== "trace.matured")
                .map((e) => publish(js, topology, maturedStream, e, { msgID: maturationKey(e) })),
              publish(
                js,
                topology,
                maturedStream,
                { type: "matured.batch", tenantId: tenant.tenantId, maturations: traces },
                { msgID: `batch:${traces.map(maturationKey).join(",")}` },
              ),
            ]);
          }
          await untilArrived(port, pacedEvents.length);
          // The records landed: this step's rows only (by creation time, an index range), every
          // 100 ms, so the bench's own reads stay out of the figure.
          for (;;) {
            const [{ n }] = await sql<{ n: number }[]>`
              select count(*)::int as n from webhook_deliveries where created_at >= ${pacedFrom} and status = 'pending'`;
            if (n === 0) break;
            await Bun.sleep(100);
          }
        }, pacedEvents.length);
        // First attempts handed to DELIVERIES (a crowded host or tenant, a failure): each costs a
        // publish, a consume, a load query and an ack on top.
        whole.handed_on = round1(((await jobsSoFar()) - jobs0) / pacedEvents.length);
        await dispatcher.stop();
        if (r === 0) {
          runStart = await tableWrites(sql); // warm-up: connections, prepared statements, JIT
          continue;
        }

        rounds.push({
          fan_out: { step: fan, floor: fanFloor },
          signed_post: { step: post, floor: postFloor },
          success_record: { step: record, floor: recordFloor },
          deliveries_message: { step: message, floor: messageFloor },
          whole_paced: { step: whole, floor: sumOf(fanFloor, postFloor, messageFloor) },
        });
      }

      const summary = Object.fromEntries(
        (Object.keys(FLOORS) as Step[]).map((s) => [
          s,
          {
            cpu_us_per_delivery: median(rounds.map((r) => r[s].step.cpu_us)),
            [`${FLOORS[s]}_cpu_us`]: median(rounds.map((r) => r[s].floor.cpu_us)),
            ratio: round1(median(rounds.map((r) => r[s].step.cpu_us / r[s].floor.cpu_us))),
            statements: median(rounds.map((r) => r[s].step.statements)),
            wal_bytes: median(rounds.map((r) => r[s].step.wal_bytes)),
            ...(s === "whole_paced" ? { handed_on: median(rounds.map((r) => r[s].step.handed_on ?? 0)) } : {}),
            [`${FLOORS[s]}_wal_bytes`]: median(rounds.map((r) => r[s].floor.wal_bytes)),
            pg_exec_wall_us: median(rounds.map((r) => r[s].step.pg_exec_wall_us)),
            [`${FLOORS[s]}_pg_exec_wall_us`]: median(rounds.map((r) => r[s].floor.pg_exec_wall_us)),
          },
        ]),
      );
      // Row counts per table lag (each backend flushes its statistics within 10 s of going idle).
      await Bun.sleep(11_000);
      const { wal_bytes: _, ...rowsPerDelivery } = tableDelta(
        runStart,
        await tableWrites(sql),
        (N + RATE * PACED_SECONDS) * ROUNDS,
      );
      const report = {
        deliveries: N,
        batch: BATCH,
        concurrency: CONCURRENCY,
        services: SERVICES,
        summary,
        webhook_table_writes_per_delivery: Object.fromEntries(
          Object.entries(rowsPerDelivery).filter(([, v]) => v !== 0),
        ),
        rounds,
      };
      console.log(JSON.stringify(report, null, 2));
      await nc.drain();
    },
  );
}

/** Three floors as one: a bare insert, a bare signed POST and a bare publish per delivery. */
function sumOf(...floors: Priced[]): Priced {
  const add = (k: "cpu_us" | "pg_exec_wall_us" | "statements" | "wal_bytes") =>
    round1(floors.reduce((a, f) => a + f[k], 0));
  const byProcess: Record<string, number> = {};
  for (const f of floors)
    for (const [k, v] of Object.entries(f.by_process)) byProcess[k] = round1((byProcess[k] ?? 0) + v);
  return {
    cpu_us: add("cpu_us"),
    by_process: byProcess,
    per_s: Math.min(...floors.map((f) => f.per_s)),
    pg_exec_wall_us: add("pg_exec_wall_us"),
    statements: add("statements"),
    wal_bytes: add("wal_bytes"),
    by_statement: {},
  };
}

/** Waits until the receiver has taken `n` POSTs since it was last asked (it forgets what it reports). */
async function untilArrived(port: number, n: number): Promise<void> {
  let got = 0;
  const deadline = Date.now() + 120_000;
  while (got < n) {
    if (Date.now() > deadline) throw new Error(`only ${got} of ${n} deliveries arrived`);
    await Bun.sleep(100);
    got += ((await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as unknown[]).length;
  }
}

/** Pulls and acks `n` messages of a durable consumer. */
async function take(js: JetStreamClient, stream: string, durable: string, n: number): Promise<void> {
  const consumer = await js.consumers.get(stream, durable);
  let got = 0;
  while (got < n) {
    const batch = await consumer.fetch({ max_messages: Math.min(500, n - got), expires: 2000 });
    for await (const m of batch) {
      m.ack();
      got++;
    }
  }
}

await main();
