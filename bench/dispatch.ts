/**
 * `npm run bench:dispatch`: webhook deliveries/s from MATURED to a local receiver through the
 * real dispatcher (fan-out, delivery rows, DELIVERIES, address check, signing, attempt records),
 * beside the ceiling: a bare loop of signed fetches to the same receiver at the same concurrency.
 * Then the latency from a MATURED publish to the first attempt's arrival at a paced rate.
 * nats-server and Postgres are started here under a scratch directory; the receiver is a child
 * process so it does not share the dispatcher's event loop.
 *
 * The machine is shared (2 cores, other benches), so dispatcher and ceiling run in alternating
 * rounds and the report gives each round and the medians.
 *
 *   bun run bench/dispatch.ts [--events 3000] [--rounds 3] [--subscriptions 8] [--rate 100] [--paced-seconds 5]
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { canonicalJson, randomBytes, SecretBox, toBase64 } from "@cellar/shared/crypto";
import { createLogger } from "@cellar/shared/logger";
import { connectNats, createTopology, ensureTopology, subjects } from "@cellar/shared/nats/topology";
import { deliveryHeaders, generateWebhookSecret } from "@cellar/shared/webhooks/signing";
import { createDispatcher, DEFAULT_ENDPOINT_CONCURRENCY } from "../apps/dispatcher/src/dispatcher";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { runBench } from "./lib/harness";
import {
  appParts,
  bareInsertFloor,
  statementsPerDelivery,
  tableDelta,
  tableWrites,
  waitForRecorded,
} from "./lib/dispatch-parts";
import { seedService, seedWebhookSubscription } from "./lib/seed";

// Child mode: the receiver. Answers 204 at once; keeps (session_id, arrival ms) for /stats.
if (process.argv[2] === "--receiver") {
  let arrivals: Array<[string, number]> = [];
  const server = Bun.serve({
    port: Number(process.argv[3]),
    hostname: "127.0.0.1",
    async fetch(req) {
      if (req.method === "GET") {
        const out = arrivals;
        arrivals = [];
        return Response.json(out);
      }
      const body = JSON.parse(await req.text());
      arrivals.push([body.data.session_id, Date.now()]);
      return new Response(null, { status: 204 });
    },
  });
  process.on("SIGTERM", () => {
    server.stop(true);
    process.exit(0);
  });
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    events: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    "no-ceiling": { type: "boolean", default: false },
    subscriptions: { type: "string", default: "8" },
    rate: { type: "string", default: "100" },
    "paced-seconds": { type: "string", default: "5" },
  },
});
const EVENTS = Number(args.events);
const ROUNDS = Number(args.rounds);
const SUBS = Number(args.subscriptions);
const RATE = Number(args.rate);
const PACED_SECONDS = Number(args["paced-seconds"]);
const CONCURRENCY = Math.min(256, SUBS * DEFAULT_ENDPOINT_CONCURRENCY);

/** CPU seconds (user + system) used so far by the processes whose command line mentions `marker`, and their children. */
function cpuSeconds(marker: string): number {
  const { readdirSync, readFileSync } = require("node:fs") as typeof import("node:fs");
  const stats = new Map<number, { ppid: number; cpu: number; cmd: string }>();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      stats.set(Number(pid), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / 100, cmd });
    } catch {}
  }
  const roots = [...stats].filter(([, s]) => s.cmd.includes(marker)).map(([pid]) => pid);
  const seen = new Set<number>(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, s] of stats) if (!seen.has(pid) && seen.has(s.ppid)) seen.add(pid), (grew = true);
  }
  return [...seen].reduce((sum, pid) => sum + (stats.get(pid)?.cpu ?? 0), 0);
}
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  await runBench(
    "dispatch",
    { nats: true, poolMax: 20, postgresSettings: { shared_preload_libraries: "pg_stat_statements" } },
    async (bench) => {
      const nats = bench.nats!;
      const port = await freePort();
      bench.spawnScript(["bench/dispatch.ts", "--receiver", String(port)], { stdio: "inherit" });
      await waitForPort(port);
      const { database } = bench;
      await database.sql`create extension if not exists pg_stat_statements`;
      const nc = await connectNats(nats.url, "bench-dispatch");
      const topology = createTopology("bench");
      const { js } = await ensureTopology(nc, topology);
      const secretBox = new SecretBox(toBase64(randomBytes(32)));
      const tenant = await bench.tenant({ webhooks: true });
      const services: Array<{ id: string; name: string }> = [];
      for (let i = 0; i < SUBS; i++) {
        const svc = await seedService(database.db, tenant.tenantId, `svc-${i}`);
        services.push({ id: svc.id, name: `svc-${i}` });
        await seedWebhookSubscription({ sql: database.sql, secretBox }, tenant, {
          traceServiceId: svc.id,
          name: `bench-${i}`,
          url: `http://127.0.0.1:${port}/hook/${i}`,
        });
      }
      const newDispatcher = async () => {
        const d = createDispatcher({
          sql: database.sql,
          js,
          topology,
          logger: createLogger("error"),
          secretBox,
          insecureAllowlist: "127.0.0.0/8",
          concurrency: CONCURRENCY,
        });
        await d.start();
        return d;
      };
      let dispatcher = await newDispatcher();
      // Jobs published to DELIVERIES so far (retries and crowded first attempts handed on).
      const jsm = await js.jetstreamManager();
      const deliveryJobsSoFar = async () => (await jsm.streams.info(topology.deliveriesStream)).state.last_seq;

      let n = 0;
      const publish = (sentAt: Map<string, number>) => {
        const i = n++;
        const svc = services[i % services.length];
        const sid = `s${i}`;
        sentAt.set(sid, Date.now());
        return js.publish(
          subjects.matured(topology, "session", tenant.tenantId),
          JSON.stringify({
            type: "session.matured",
            tenantId: tenant.tenantId,
            traceServiceId: svc.id,
            serviceName: svc.name,
            entityPk: crypto.randomUUID(),
            sessionId: sid,
            maturationCount: 1,
            occurredAt: new Date().toISOString(),
          }),
        );
      };
      const collect = async (expect: number, timeoutMs = 120_000) => {
        const got: Array<[string, number]> = [];
        const deadline = Date.now() + timeoutMs;
        while (got.length < expect && Date.now() < deadline) {
          await sleep(100);
          got.push(...((await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as Array<[string, number]>));
        }
        if (got.length < expect) throw new Error(`only ${got.length} of ${expect} deliveries arrived`);
        return got;
      };

      // Warm-up: connections, prepared statements, JIT.
      const warm = new Map<string, number>();
      await Promise.all(Array.from({ length: 300 }, () => publish(warm)));
      await collect(300);

      // 1. Throughput: a backlog of EVENTS MATURED messages is published while the dispatcher is
      // stopped (so the bench's own publishing is not on the clock), then a dispatcher starts and
      // drains it: start -> last delivery arrived. Alternating with 2. the ceiling: the same
      // signed POSTs from a bare loop, same concurrency, same receiver.
      const dispatcherRounds: number[] = [];
      const ceilingRounds: number[] = [];
      const stages: Array<Record<string, number>> = [];
      const pgMarker = join(bench.scratch, "pg");
      const natsMarker = join(bench.scratch, "nats");
      const receiverMarker = "--receiver";
      const cpuNow = () => ({
        bench: selfCpu(),
        postgres: cpuSeconds(pgMarker),
        nats: cpuSeconds(natsMarker),
        receiver: cpuSeconds(receiverMarker),
      });
      const cpuDelta = (a: ReturnType<typeof cpuNow>, b: ReturnType<typeof cpuNow>) =>
        Object.fromEntries(
          Object.keys(a).map((k) => [k, Math.round(((((b as any)[k] - (a as any)[k]) * 1000) / EVENTS) * 1000) / 1000]),
        ) as Record<string, number>;
      const statementRounds: Array<Record<string, number>> = [];
      const tableRounds: Array<Record<string, number>> = [];
      const floorRounds: Array<Record<string, number>> = [];
      const cpuPer1000: Array<{ dispatcher: Record<string, number>; ceiling?: Record<string, number> }> = [];
      const secrets = [generateWebhookSecret()];
      for (let round = 0; round < ROUNDS; round++) {
        const burst = new Map<string, number>();
        await dispatcher.stop();
        const [{ n: rowsBefore }] = await database.sql`select count(*)::int as n from webhook_deliveries`;
        for (let i = 0; i < EVENTS; i += 500)
          await Promise.all(Array.from({ length: Math.min(500, EVENTS - i) }, () => publish(burst)));
        await database.sql`select pg_stat_statements_reset()`;
        const jobs0 = await deliveryJobsSoFar();
        const tables0 = await tableWrites(database.sql);
        const cpu0 = cpuNow();
        const t0 = Date.now();
        dispatcher = await newDispatcher();
        // When the fan-out had written every delivery row (the first stage's share of the time).
        let fannedOut = 0;
        while (!fannedOut) {
          const [{ n }] = await database.sql`select count(*)::int as n from webhook_deliveries`;
          if (n - rowsBefore >= EVENTS) fannedOut = Date.now() - t0;
          else await sleep(20);
        }
        const arrived = await collect(EVENTS);
        stages.push({ fanned_out_ms: fannedOut, all_arrived_ms: Math.max(...arrived.map((a) => a[1])) - t0 });
        dispatcherRounds.push(EVENTS / ((Math.max(...arrived.map((a) => a[1])) - t0) / 1000));
        cpuPer1000.push({ dispatcher: cpuDelta(cpu0, cpuNow()) });
        // Let the last success records land before reading what Postgres spent.
        await waitForRecorded(database.sql, rowsBefore + EVENTS);
        statementRounds.push(await statementsPerDelivery(database.sql, EVENTS));
        tableRounds.push({
          ...tableDelta(tables0, await tableWrites(database.sql), EVENTS),
          deliveries_jobs: Math.round((((await deliveryJobsSoFar()) - jobs0) / EVENTS) * 1000) / 1000,
        });
        floorRounds.push(await bareInsertFloor(database.sql, tenant.tenantId, EVENTS));
        if (args["no-ceiling"]) continue;

        let next = 0;
        const ccpu0 = cpuNow();
        const c0 = Date.now();
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < EVENTS) {
              const i = next++;
              const id = `msg_bench${round}_${i}`;
              const at = new Date();
              const body = canonicalJson({
                id,
                type: "session.matured",
                timestamp: at.toISOString(),
                data: { session_id: `c${i}`, maturation_count: 1, tenant_id: tenant.tenantId },
              });
              const res = await fetch(`http://127.0.0.1:${port}/hook/${i % SUBS}`, {
                method: "POST",
                headers: deliveryHeaders(secrets, id, at, body),
                body,
                redirect: "manual",
              });
              await res.arrayBuffer();
            }
          }),
        );
        ceilingRounds.push(EVENTS / ((Date.now() - c0) / 1000));
        cpuPer1000.at(-1)!.ceiling = cpuDelta(ccpu0, cpuNow());
        await collect(EVENTS);
      }

      // 3. Paced: MATURED publish -> first attempt arrives at the receiver.
      const paced = new Map<string, number>();
      const total = RATE * PACED_SECONDS;
      const start = Date.now();
      for (let i = 0; i < total; i++) {
        const due = start + (i * 1000) / RATE;
        if (due > Date.now()) await sleep(due - Date.now());
        void publish(paced);
      }
      const pacedArrivals = await collect(total);
      const latencies = pacedArrivals.map(([sid, at]) => at - paced.get(sid)!).sort((a, b) => a - b);
      await dispatcher.stop();

      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const d = median(dispatcherRounds);
      const c = ceilingRounds.length ? median(ceilingRounds) : NaN;
      console.log(
        JSON.stringify(
          {
            events_per_round: EVENTS,
            rounds: ROUNDS,
            subscriptions: SUBS,
            concurrency: CONCURRENCY,
            dispatcher_deliveries_per_s: dispatcherRounds.map(Math.round),
            bare_signed_fetch_per_s: ceilingRounds.map(Math.round),
            dispatcher_stages: stages,
            cpu_seconds_per_1000_deliveries: cpuPer1000,
            postgres_exec_us_per_delivery_by_statement: statementRounds,
            postgres_table_writes_per_delivery: tableRounds,
            floor_bare_insert_us_per_delivery: floorRounds,
            app_us_per_delivery: appParts(Math.max(EVENTS, 20_000)),
            median_ratio: `${Math.round((d / c) * 100)}%`,
            paced_rate_per_s: RATE,
            maturation_to_first_attempt_ms: {
              p50: pct(latencies, 50),
              p90: pct(latencies, 90),
              p99: pct(latencies, 99),
              max: latencies.at(-1),
            },
          },
          null,
          2,
        ),
      );
      await nc.drain();
    },
  );
}

await main();
