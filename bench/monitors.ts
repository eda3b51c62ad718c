/**
 * `bun run bench/monitors.ts [--sessions 300] [--rounds 2]`: what monitors cost the processor.
 * Real nats-server and Postgres started here, the processor built in-process (createProcessor,
 * maturation window 1 s). Each round ingests `--sessions` one-trace sessions into a service with
 * no monitor (the floor), then as many into a service with 100 monitors (every one matching every
 * session), and times each batch from the first publish until every session matured and its
 * MATURED message was evaluated (the 100-monitor service: 100 samples per session written).
 * Prints maturations per second of both, beside each other, and their ratio.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { monitorsConsumer } from "@cellar/shared/nats/catalogue";
import { connectNats, createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import { createProcessor } from "../apps/processor/src/processor";
import { startNatsServer } from "../scripts/infra/nats-server";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { createSessionPublisher } from "./lib/sessions";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: { sessions: { type: "string", default: "300" }, rounds: { type: "string", default: "2" } },
});
const N = Number(args.sessions);
const MONITORS = 100;
const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-monitors-"));
const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
const database = createDatabase(pg.url, { max: 20 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  await runMigrations(pg.url);
  const nc = await connectNats(nats.url, "bench-monitors");
  const topology = createTopology("bench");
  const { js, jsm } = await ensureTopology(nc, topology);
  const tenant = await bootstrapTenant(database.db, { name: "bench" });
  const templates = makeTemplates(50);
  const processor = createProcessor({
    sql: database.sql,
    js,
    topology,
    logger: createLogger("warn"),
    windowSeconds: 1,
    activityCoalesceMs: 0,
  });
  await processor.start();
  const publishMany = createSessionPublisher(js, topology, tenant.tenantId, templates);
  const publishSessions = (service: string, prefix: string) => publishMany(service, prefix, N);
  // Create both services, then 100 monitors on one (each matches every session: no filters).
  await publishSessions("floor-svc", "warm-floor");
  await publishSessions("monitored-svc", "warm-monitored");
  const serviceId = async (name: string) =>
    (await database.sql<{ id: string }[]>`select id from trace_services where name = ${name}`)[0]?.id;
  while (!(await serviceId("monitored-svc"))) await sleep(100);
  const monitored = await serviceId("monitored-svc");
  const metrics = ["latency_p95", "cost", "tokens", "error_rate", "problem_rate"];
  for (let i = 0; i < MONITORS; i++) {
    await database.sql`
      insert into monitors (tenant_id, trace_service_id, name, metric, entity, window_seconds, direction, threshold, hysteresis)
      values (${tenant.tenantId}, ${monitored!}, ${`m${i}`}, ${metrics[i % metrics.length]}, 'session', 3600, 'above', ${1e12}, 0)`;
  }
  const monitorConsumerIdle = async () => {
    const info = await jsm.consumers.info(topology.maturedStream, monitorsConsumer.consumer!.durable);
    return info.num_pending === 0 && info.num_ack_pending === 0;
  };
  const matured = async (prefix: string) =>
    (
      await database.sql<{ n: number }[]>`
        select count(*)::int as n from sessions where session_id like ${`${prefix}-%`} and status = 'matured' and published_count = maturation_count`
    )[0].n;
  const settle = async (prefix: string, samplesWanted: number) => {
    while ((await matured(prefix)) < N) await sleep(50);
    while (!(await monitorConsumerIdle())) await sleep(50);
    if (samplesWanted > 0) {
      while (
        (
          await database.sql<{ n: number }[]>`
            select count(*)::int as n from monitor_samples ms join sessions s on s.id = ms.entity_pk where s.session_id like ${`${prefix}-%`}`
        )[0].n < samplesWanted
      )
        await sleep(50);
    }
  };
  await settle("warm-floor", 0);
  await settle("warm-monitored", 0);
  console.log(
    `${N} one-trace sessions per batch, maturation window 1 s; the service on the right has ${MONITORS} monitors`,
  );
  for (let r = 1; r <= Number(args.rounds); r++) {
    const rate = async (service: string, prefix: string, samples: number) => {
      const t0 = performance.now();
      await publishSessions(service, prefix);
      await settle(prefix, samples);
      return N / ((performance.now() - t0) / 1000);
    };
    const floor = await rate("floor-svc", `r${r}-floor`, 0);
    const withMonitors = await rate("monitored-svc", `r${r}-mon`, N * MONITORS);
    console.log(
      `round ${r}: 0 monitors ${floor.toFixed(1)} maturations/s | ${MONITORS} monitors ${withMonitors.toFixed(1)} maturations/s (${((withMonitors / floor) * 100).toFixed(0)}% of the floor)`,
    );
  }
  await processor.stop();
  await nc.drain();
} finally {
  await database.close();
  await nats.stop();
  await pg.stop();
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
