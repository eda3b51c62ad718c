/**
 * `npm run bench -- maturation-profile [--sessions 2000] [--traces 10] [--rounds 2] [--pg-stats]`:
 * the maturation alone, per trace, on the bench's sessions (issue 36, figure 2's work without the
 * rest of the system), beside the bare maturation of the same rows (bench/e2e/floor.ts's shape)
 * measured in the same run.
 *
 * Real Postgres and nats-server, the processor's own functions called in this process. Each round
 * writes `--sessions` sessions of `--traces` traces (writeIngestBatch, 500 items a transaction, as
 * the INGEST consumer does), lets the window (1 s) pass, then matures them as the activity consumer
 * does: the traces in chunks of 50, then the sessions in chunks of 50, 4 chunks at once, with the
 * processor's latency baseline source. Printed per trace: this process's CPU (the processor's
 * share), Postgres' (every backend) and nats-server's, and with `--pg-stats` the statements'
 * execution time and calls per trace. Profile the processor's share with
 * `bun --cpu-prof --cpu-prof-dir=DIR bench/maturation-profile.ts` and bench/profile-summary.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { connectNats, createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import { matureSessions, matureTraces, type MaturationDeps } from "../apps/processor/src/maturation/mature";
import { createLatencyNorms } from "../apps/processor/src/maturation/norms";
import { startNatsServer } from "../scripts/infra/nats-server";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { measureFloor } from "./e2e/floor";
import { cpuByProcess, cpuDelta, postmasterPid } from "./lib/proc";
import { chunks, writeDueSessions } from "./lib/sessions";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    sessions: { type: "string", default: "2000" },
    traces: { type: "string", default: "10" },
    rounds: { type: "string", default: "2" },
    "pg-stats": { type: "boolean", default: false },
  },
});
const N = Number(args.sessions);
const TRACES = Number(args.traces);
const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-matprof-"));
const pgDir = join(scratch, "pg");
let pg = await startEmbeddedPostgres({ dataDir: pgDir, persistent: true });
const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
/**
 * 30 ms of a function of its own before and after each round's maturation: a --cpu-prof profile
 * of this process can then be cut to the samples between two marks (the maturation's alone).
 */
function profileMark(): void {
  const end = performance.now() + 30;
  while (performance.now() < end);
}

try {
  if (args["pg-stats"]) {
    const d = createDatabase(pg.url, { max: 1 });
    await d.sql`alter system set shared_preload_libraries = 'pg_stat_statements'`;
    await d.close();
    await pg.stop();
    pg = await startEmbeddedPostgres({ dataDir: pgDir, persistent: true });
  }
  const database = createDatabase(pg.url, { max: 12 });
  const sql = database.sql;
  if (args["pg-stats"]) await sql`create extension if not exists pg_stat_statements`;
  await runMigrations(pg.url);
  const nc = await connectNats(nats.url, "bench-matprof");
  const topology = createTopology("bench");
  const { js } = await ensureTopology(nc, topology);
  const tenant = await bootstrapTenant(database.db, { name: "bench" });
  const templates = makeTemplates(200);
  const deps: MaturationDeps = {
    sql,
    js,
    topology,
    logger: createLogger("warn"),
    windowSeconds: 1,
    latencyNorms: createLatencyNorms(sql),
  };
  const postmaster = postmasterPid(pgDir);
  const cpu = () => {
    const self = process.cpuUsage();
    return { ...cpuByProcess({ nats: [nats.process.pid] }, postmaster), self: (self.user + self.system) / 1e6 };
  };
  console.log(
    `maturation profile (${N} sessions of ${TRACES} traces a round; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")})`,
  );
  for (let round = 1; round <= Number(args.rounds); round++) {
    const service = `svc-${round}`;
    // A session's traces in time order, interleaved with the other sessions' as the e2e bench sends them.
    await writeDueSessions(sql, {
      tenantId: tenant.tenantId,
      service,
      round,
      sessions: N,
      traces: TRACES,
      interleaved: true,
      payload: (s, t) =>
        JSON.parse(
          templates[(s * TRACES + t) % templates.length]
            .replace("__SESSION__", `r${round}-${s}`)
            .replace('"session_id"', `"trace_id":"r${round}-${s}-${t}","session_id"`),
        ),
    });
    const sessionPks = (
      await sql<{ id: string }[]>`
        select s.id from sessions s join trace_services ts on ts.id = s.trace_service_id where ts.name = ${service} order by s.id`
    ).map((r) => r.id);
    const tracePks = (
      await sql<{ id: string }[]>`
        select t.id from traces t join trace_services ts on ts.id = t.trace_service_id where ts.name = ${service} order by t.ingested_at, t.id`
    ).map((r) => r.id);
    if (args["pg-stats"]) await sql`select pg_stat_statements_reset()`;
    const slots = pLimit(4);
    profileMark();
    const c0 = cpu();
    const t0 = performance.now();
    await Promise.all(chunks(tracePks, 50).map((c) => slots(() => matureTraces(deps, c))));
    const tTraces = performance.now();
    await Promise.all(chunks(sessionPks, 50).map((c) => slots(() => matureSessions(deps, c))));
    const t1 = performance.now();
    const c1 = cpu();
    profileMark();
    const d = cpuDelta(c0, c1);
    const selfUs = d.self * 1e6;
    const n = tracePks.length;
    const [{ matured }] = await sql<{ matured: number }[]>`
      select count(*)::int as matured from session_analyses a join sessions s on s.id = a.session_pk where s.id = any(${sql.array(sessionPks)}::uuid[])`;
    console.log(
      `  round ${round}: ${n} traces, ${matured}/${sessionPks.length} sessions matured in ${((t1 - t0) / 1000).toFixed(1)} s ` +
        `(traces ${((tTraces - t0) / 1000).toFixed(1)} s); per trace: processor ${(selfUs / n).toFixed(0)} us, postgres ${((d.postgres * 1e6) / n).toFixed(0)} us, ` +
        `nats ${((d.nats * 1e6) / n).toFixed(0)} us = ${((selfUs + (d.postgres + d.nats) * 1e6) / n).toFixed(0)} us; load ${loadavg()[0].toFixed(1)}`,
    );
    if (args["pg-stats"]) {
      const top = await sql<{ calls: number; ms: number; rows: number; q: string }[]>`
        select calls::int, total_exec_time::float8 as ms, rows::int, regexp_replace(left(query, 120), '\\s+', ' ', 'g') as q
        from pg_stat_statements order by total_exec_time desc limit 20`;
      const [all] = await sql<{ calls: number; ms: number }[]>`
        select sum(calls)::float8 as calls, sum(total_exec_time)::float8 as ms from pg_stat_statements`;
      console.log(
        `    statements: ${((all.ms * 1000) / n).toFixed(0)} us, ${(all.calls / n).toFixed(2)} calls per trace`,
      );
      for (const t of top)
        console.log(
          `    ${((t.ms * 1000) / n).toFixed(1).padStart(6)} us ${(t.calls / n).toFixed(3).padStart(6)} calls ${String(t.rows).padStart(7)} rows  ${t.q}`,
        );
    }
  }
  // The floor: the bench's bare maturation of the same rows (read by key, one result row, one message).
  const floor = await measureFloor({ nc, sql, pgDir, natsPid: nats.process.pid!, rows: 20_000 });
  console.log(`  bare maturation (the floor): ${floor.maturationUs} us per trace`);
  await nc.close();
  await database.close();
} finally {
  await Promise.allSettled([nats.stop(), pg.stop()]);
  rmSync(scratch, { recursive: true, force: true });
}
