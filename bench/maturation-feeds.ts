/**
 * `npm run bench -- maturation-feeds [--sessions 2000] [--traces 3] [--rounds 2]`: what the
 * overview's rollups and monitor evaluation cost per session maturation, beside the maturation
 * itself (issue 36: fed from the maturation that computes them, or priced and shown cheap).
 *
 * Real Postgres and nats-server, the processor's own functions called in this process, nothing
 * else running. Each round writes `--sessions` sessions of `--traces` traces (writeIngestBatch,
 * as the INGEST consumer does), makes them due, then times, on the same sessions:
 * 1. the maturation (matureSessions, chunks of 50, 4 at once: the processor's defaults), the floor;
 * 2. the rollups (applySessionRollups, batches of 200, one at a time: the `processor-rollups`
 *    consumer's handler without its MATURED read);
 * 3. monitor evaluation (evaluateMaturations, batches of 64 per service as the consumer coalesces
 *    them) with no monitor on the service, then with 5 monitors (every one matching every session).
 * Printed per step: wall ms per session and this process's CPU us per session; Postgres's work
 * shows in the wall time only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { connectNats, createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import type { MaturedMessage } from "@cellar/shared/payloads";
import { matureSessions, type MaturationDeps } from "../apps/processor/src/maturation/mature";
import { createMonitorCache, evaluateMaturations } from "../apps/processor/src/monitors/evaluate";
import { applySessionRollups } from "../apps/processor/src/rollups/rollups";
import { startNatsServer } from "../scripts/infra/nats-server";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { chunks, writeDueSessions } from "./lib/sessions";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    sessions: { type: "string", default: "2000" },
    traces: { type: "string", default: "3" },
    rounds: { type: "string", default: "2" },
  },
});
const N = Number(args.sessions);
const TRACES = Number(args.traces);
const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-feeds-"));
const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
const database = createDatabase(pg.url, { max: 12 });
const sql = database.sql;

/** Runs `fn`, returns wall ms and this process's CPU us (user + system). */
async function timed(fn: () => Promise<unknown>): Promise<{ ms: number; cpuUs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuUs: c.user + c.system };
}

try {
  await runMigrations(pg.url);
  const nc = await connectNats(nats.url, "bench-feeds");
  const topology = createTopology("bench");
  const { js } = await ensureTopology(nc, topology);
  const tenant = await bootstrapTenant(database.db, { name: "bench" });
  const templates = makeTemplates(50);
  const published: MaturedMessage[] = [];
  const deps: MaturationDeps = {
    sql,
    js,
    topology,
    logger: createLogger("warn"),
    windowSeconds: 1,
    afterCommit: (m) => void published.push(m),
  };
  const monitored = { five: false };
  console.log(
    `maturation feeds (${N} sessions of ${TRACES} traces a round; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")})`,
  );
  for (let round = 1; round <= Number(args.rounds); round++) {
    const service = `svc-${round}`;
    // Write the sessions as the INGEST consumer does (500 items a transaction), then make them due.
    await writeDueSessions(sql, {
      tenantId: tenant.tenantId,
      service,
      round,
      sessions: N,
      traces: TRACES,
      interleaved: false,
      payload: (s, t) =>
        JSON.parse(
          templates[(s + t) % templates.length]
            .replace("__SESSION__", `r${round}-${s}`)
            .replace('"id":"chatcmpl-bench', `"id":"chatcmpl-r${round}-${s}-${t}-`),
        ),
    });
    const pks = (
      await sql<{ id: string }[]>`
        select s.id from sessions s join trace_services ts on ts.id = s.trace_service_id
        where ts.name = ${service} order by s.id`
    ).map((r) => r.id);
    published.length = 0;
    const slots = pLimit(4);
    const maturation = await timed(() => Promise.all(chunks(pks, 50).map((c) => slots(() => matureSessions(deps, c)))));
    const sessions = published.filter((m) => m.type === "session.matured");
    const rollups = await timed(async () => {
      for (const c of chunks(sessions, 200))
        await applySessionRollups(
          sql,
          c.map((m) => m.entityPk),
        );
    });
    const evaluate = async () => {
      const monitorsOf = createMonitorCache(sql, 60_000);
      for (const c of chunks(sessions, 64)) await evaluateMaturations(sql, monitorsOf, c);
    };
    const noMonitor = await timed(evaluate);
    if (!monitored.five) {
      const [{ id }] = await sql<{ id: string }[]>`select id from trace_services where name = ${service}`;
      const metrics = ["latency_p95", "cost", "tokens", "error_rate", "problem_rate"];
      for (let i = 0; i < 5; i++)
        await sql`
          insert into monitors (tenant_id, trace_service_id, name, metric, entity, window_seconds, direction, threshold, hysteresis)
          values (${tenant.tenantId}, ${id}, ${`m${i}`}, ${metrics[i]}, 'session', 3600, 'above', ${1e12}, 0)`;
    }
    const fiveMonitors = await timed(evaluate);
    const per = (t: { ms: number; cpuUs: number }) =>
      `${((t.ms * 1000) / sessions.length).toFixed(0)} us wall, ${(t.cpuUs / sessions.length).toFixed(0)} us CPU`;
    const share = (t: { ms: number }) => `${((t.ms / maturation.ms) * 100).toFixed(1)}% of the maturation's wall time`;
    console.log(`  round ${round} (${sessions.length} sessions matured; load ${loadavg()[0].toFixed(1)}):`);
    console.log(`    maturation (the floor):        ${per(maturation)} per session`);
    console.log(`    rollups:                       ${per(rollups)} per session (${share(rollups)})`);
    console.log(`    monitors, none on the service: ${per(noMonitor)} per session (${share(noMonitor)})`);
    console.log(`    monitors, 5 on the service:    ${per(fiveMonitors)} per session (${share(fiveMonitors)})`);
  }
  await nc.close();
} finally {
  await database.sql.end();
  await nats.stop();
  await pg.stop();
  rmSync(scratch, { recursive: true, force: true });
}
