/**
 * `bun run bench/fairness.ts`: one tenant's flood to dead endpoints against another tenant's
 * webhook latency.
 *
 * Tenant A has 100 subscriptions (20 services x 5), each to its own dead host (127.0.0.2..101,
 * a server that accepts and never answers), and a backlog of MATURED events that fan out to
 * `--a-events` x 5 deliveries (100,000 by default). Tenant B has one subscription to a live
 * receiver (204 at once) and publishes `--b-rate` events per second. Printed: B's
 * maturation-to-first-attempt (MATURED publish -> attempt start, from the attempt records) p50 /
 * p99 with B alone (the floor, same run) and during A's flood, and how many of B's events had no
 * attempt by the end. Real nats-server, Postgres and dispatcher; receivers in a child process.
 *
 *   bun run bench/fairness.ts [--a-events 20000] [--seconds 60] [--b-rate 5] [--timeout-ms 5000] [--same-lane] [--root <checkout>]
 *
 * `--root` runs the dispatcher of another checkout (before/after comparisons).
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { randomBytes, toBase64 } from "@cellar/shared/crypto";
import { createLogger } from "@cellar/shared/logger";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { runBench } from "./lib/harness";
import { seedService, seedWebhookSubscription } from "./lib/seed";

if (process.argv[2] === "--receivers") {
  Bun.serve({ port: Number(process.argv[3]), hostname: "127.0.0.1", fetch: () => new Response(null, { status: 204 }) });
  // Dead: accepts on every loopback address, never answers (the dispatcher's timeout ends it).
  Bun.serve({
    port: Number(process.argv[4]),
    hostname: "0.0.0.0",
    idleTimeout: 255,
    fetch: () => new Promise<Response>(() => {}),
  });
  process.on("SIGTERM", () => process.exit(0));
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    "a-events": { type: "string", default: "20000" },
    seconds: { type: "string", default: "60" },
    "floor-seconds": { type: "string", default: "15" },
    "b-rate": { type: "string", default: "5" },
    "timeout-ms": { type: "string", default: "5000" },
    root: { type: "string", default: resolve(import.meta.dir, "..") },
    "same-lane": { type: "boolean", default: false },
  },
});
const root = args.root!;
const A_EVENTS = Number(args["a-events"]);
const SECONDS = Number(args.seconds);
const B_RATE = Number(args["b-rate"]);
const { createDispatcher } = await import(join(root, "apps/dispatcher/src/dispatcher.ts"));
const { SecretBox } = await import(join(root, "shared/crypto.ts"));
const { connectNats, createTopology, ensureTopology } = await import(join(root, "shared/nats/topology.ts"));
// The checkout's own publish: its catalogue picks the subject (a lane subject since lanes).
const { publish: publishTo } = await import(join(root, "shared/nats/publish.ts"));
const { maturedStream, laneConsumerOf } = await import(join(root, "shared/nats/catalogue.ts"));

await runBench("fairness", { nats: true, poolMax: 20 }, async (bench) => {
  const nats = bench.nats!;
  const livePort = await freePort();
  const deadPort = await freePort();
  bench.spawnScript(["bench/fairness.ts", "--receivers", String(livePort), String(deadPort)], { stdio: "inherit" });
  await waitForPort(livePort);
  await waitForPort(deadPort);
  const { database } = bench;
  const sql = database.sql;
  const nc = await connectNats(nats.url, "bench-fairness");
  const topology = createTopology("bench");
  const { js } = await ensureTopology(nc, topology);
  const secretBox = new SecretBox(toBase64(randomBytes(32)));
  const subscribe = (owner: { tenantId: string; ownerId: string }, serviceId: string, url: string) =>
    seedWebhookSubscription({ sql, secretBox }, owner, { traceServiceId: serviceId, url });

  const a = await bench.tenant({ name: "flood", webhooks: true, email: "a@flood.test" });
  const aServices: Array<{ id: string; name: string }> = [];
  for (let s = 0; s < 20; s++) {
    const svc = await seedService(database.db, a.tenantId, `a-${s}`);
    aServices.push({ id: svc.id, name: `a-${s}` });
    for (let k = 0; k < 5; k++) await subscribe(a, svc.id, `http://127.0.0.${2 + s * 5 + k}:${deadPort}/dead`);
  }
  // With tenant lanes, B is a tenant in another lane than A (1 in 16 share A's, and then share its
  // backlog: docs/webhooks.md); `--same-lane` measures that case instead.
  const laneOf = (tenantId: string): string =>
    laneConsumerOf ? laneConsumerOf(maturedStream, topology, tenantId).durable : "one consumer";
  let b = await bench.tenant({ name: "bystander", webhooks: true, email: "b@bystander.test" });
  for (let i = 0; laneConsumerOf && i < 100 && (laneOf(b.tenantId) === laneOf(a.tenantId)) !== args["same-lane"]; i++) {
    b = await bench.tenant({ name: `bystander-${i}`, webhooks: true, email: `b${i}@bystander.test` });
  }
  const bService = await seedService(database.db, b.tenantId, "b-0");
  await subscribe(b, bService.id, `http://127.0.0.1:${livePort}/live`);

  let seq = 0;
  const publish = (tenantId: string, svc: { id: string; name: string }) =>
    publishTo(js, topology, maturedStream, {
      type: "session.matured",
      tenantId,
      traceServiceId: svc.id,
      serviceName: svc.name,
      entityPk: crypto.randomUUID(),
      sessionId: `s${++seq}`,
      maturationCount: 1,
      occurredAt: new Date().toISOString(),
    });
  const newDispatcher = async () => {
    const d = createDispatcher({
      sql,
      js,
      topology,
      logger: createLogger("error"),
      secretBox,
      insecureAllowlist: "127.0.0.0/8",
      timeoutMs: Number(args["timeout-ms"]),
    });
    await d.start();
    return d;
  };
  /** B publishes B_RATE events per second for `seconds`; returns the window. */
  const bystander = async (seconds: number) => {
    const from = new Date();
    const end = Date.now() + seconds * 1000;
    let sent = 0;
    while (Date.now() < end) {
      await publish(b.tenantId, { id: bService.id, name: "b-0" });
      sent++;
      await Bun.sleep(1000 / B_RATE);
    }
    return { from, to: new Date(), sent };
  };
  const latencies = async (w: { from: Date; to: Date; sent: number }) => {
    const rows = await sql<{ ms: number }[]>`
      select extract(epoch from (a.attempted_at - (d.body::json->'data'->>'occurred_at')::timestamptz)) * 1000 as ms
      from (
        -- A first attempt that succeeded is kept in its delivery's row (migration 0035).
        select delivery_id, attempted_at from webhook_attempts where attempt = 1
        union all select id, first_attempted_at from webhook_deliveries where first_attempted_at is not null
      ) a join webhook_deliveries d on d.id = a.delivery_id
      where d.tenant_id = ${b.tenantId}
        and (d.body::json->'data'->>'occurred_at')::timestamptz between ${w.from} and ${w.to}`;
    const ms = rows.map((r) => Number(r.ms)).sort((x, y) => x - y);
    const q = (p: number) => (ms.length ? ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] : NaN);
    return { attempted: ms.length, sent: w.sent, p50: q(0.5), p99: q(0.99), max: ms.at(-1) ?? NaN };
  };

  // Floor: B alone.
  let dispatcher = await newDispatcher();
  const floorWindow = await bystander(Number(args["floor-seconds"]));
  await Bun.sleep(2000);
  const floor = await latencies(floorWindow);

  // The flood: A's backlog is published with the dispatcher stopped, then B runs during it.
  await dispatcher.stop();
  for (let i = 0; i < A_EVENTS; i += 1000) {
    await Promise.all(
      Array.from({ length: Math.min(1000, A_EVENTS - i) }, (_, j) =>
        publish(a.tenantId, aServices[(i + j) % aServices.length]),
      ),
    );
  }
  dispatcher = await newDispatcher();
  const t0 = Date.now();
  const floodWindow = await bystander(SECONDS);
  await Bun.sleep(5000);
  const flood = await latencies(floodWindow);
  const [aStats] = await sql<{ deliveries: number; attempts: number }[]>`
    select (select count(*)::int from webhook_deliveries where tenant_id = ${a.tenantId}) as deliveries,
      (select count(*)::int from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.tenant_id = ${a.tenantId})
        + (select count(*)::int from webhook_deliveries where tenant_id = ${a.tenantId} and first_attempted_at is not null) as attempts`;
  const elapsedS = Math.round((Date.now() - t0) / 1000);
  await dispatcher.stop();

  const f = (n: number) => (Number.isNaN(n) ? "-" : `${Math.round(n)} ms`);
  console.log(
    `fairness (${root}): A = ${A_EVENTS} events x 5 subscriptions to dead hosts (timeout ${args["timeout-ms"]} ms); B = ${B_RATE} events/s to a live receiver`,
  );
  console.log(`  MATURED consumer of A: ${laneOf(a.tenantId)}, of B: ${laneOf(b.tenantId)}`);
  console.log(
    `  B alone (floor):   p50 ${f(floor.p50)}  p99 ${f(floor.p99)}  max ${f(floor.max)}  attempted ${floor.attempted}/${floor.sent}`,
  );
  console.log(
    `  B during A flood:  p50 ${f(flood.p50)}  p99 ${f(flood.p99)}  max ${f(flood.max)}  attempted ${flood.attempted}/${flood.sent}  (${flood.sent - flood.attempted} never attempted within ${SECONDS + 5} s)`,
  );
  console.log(`  A after ${elapsedS} s: ${aStats.deliveries} delivery rows, ${aStats.attempts} attempts`);
  await nc.drain();
  await database.close();
});
