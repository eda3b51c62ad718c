/**
 * The overview read (GET /api/v1/overview/:service, docs/dashboard.md) over a cluster filled by
 * bench/seed.ts (the pipeline's stored shape: sessions, traces, analyses, findings spread over
 * 30 days), after the rollup backfill (apps/processor/src/rollups) has rolled every matured
 * session up. Prints p50/p99 per window beside a floor measured in the same run: a bare
 * `select 1` round trip on the same pool.
 *
 *   bun run bench/overview.ts --data-dir <dir> [--traces 100000] [--reads 200] [--rebuild] [--newer-only]
 *
 * Seeds (or tops up) <dir> by running bench/seed.ts itself, then backfills, then reads through
 * the platform app in-process (authentication, validation and JSON included). Then the reads the
 * platform gained since the overview, each the same way: the ledger (1h, 24h, 7d), a session's
 * cost breakdown, the evaluators of the service, an evaluator's latest and latest failed
 * judgements, and its agreement with reviewers (the rows bench/lib/seed-newer.ts seeds).
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { createPlatformApp } from "../apps/platform/src/app";
import { createPlatformLimiter } from "../apps/platform/src/http/limits";
import { backfillRollups } from "../apps/processor/src/rollups/rollups";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { readSeedKeys } from "./e2e/cluster";
import { SEED_EVALUATOR } from "./lib/seed-newer";
import { pct } from "./lib/proc";

const { values: args } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    traces: { type: "string", default: "100000" },
    reads: { type: "string", default: "200" },
    /** Drop the rollups first, so the backfill rebuilds them all (after a change of their shape). */
    rebuild: { type: "boolean", default: false },
    /** Only the newer reads (no rollup backfill, no overview windows): they read no rollup. */
    "newer-only": { type: "boolean", default: false },
  },
});
if (!args["data-dir"]) throw new Error("--data-dir is required");
const dataDir = resolve(args["data-dir"]);
const READS = Number(args.reads);

const seed = spawnSync(
  process.execPath,
  ["run", resolve(import.meta.dir, "seed.ts"), "--data-dir", dataDir, "--traces", String(args.traces)],
  { stdio: "inherit" },
);
if (seed.status !== 0) throw new Error("bench/seed.ts failed");

const pg = await startEmbeddedPostgres({ dataDir, persistent: true });
const database = createDatabase(pg.url, { max: 4 });
try {
  await runMigrations(pg.url);
  const { sql } = database;
  const keys = readSeedKeys(dataDir);
  const [{ traces, sessions }] = await sql<{ traces: number; sessions: number }[]>`
    select (select count(*) from traces)::int as traces, (select count(*) from session_analyses)::int as sessions`;
  if (args.rebuild) await sql`truncate overview_rollups, overview_session_parts`;
  let t = performance.now();
  const applied = args["newer-only"] ? 0 : await backfillRollups(sql, { batch: 2000, concurrency: 4 });
  const backfillSeconds = (performance.now() - t) / 1000;
  const [{ rows, bytes }] = await sql<{ rows: number; bytes: string }[]>`
    select count(*)::int as rows, pg_total_relation_size('overview_rollups')::text as bytes from overview_rollups`;
  console.log(
    `overview: ${traces.toLocaleString("en")} traces, ${sessions.toLocaleString("en")} matured sessions stored; backfill rolled up ${applied.toLocaleString("en")} sessions in ${backfillSeconds.toFixed(1)} s (${Math.round(applied / Math.max(backfillSeconds, 0.001))}/s); overview_rollups ${rows.toLocaleString("en")} rows, ${(Number(bytes) / 1e6).toFixed(1)} MB`,
  );
  await sql`analyze overview_rollups`;

  const app = createPlatformApp({
    db: database.db,
    sql,
    keys: new KeyResolver(database.db),
    logger: createLogger("silent"),
    windowSeconds: 180,
    // The read itself is measured: the per-key request limit (50/s) would answer 429 first.
    limiter: createPlatformLimiter({
      perKey: { perSecond: 1e9, burst: 1e9 },
      sendsPerTenant: { perSecond: 1, burst: 1 },
    }),
  });
  const read = async (window: string) => {
    const res = await app.handle(
      new Request(`http://bench/api/v1/overview/${keys.service}?window=${window}`, {
        headers: { authorization: `Token ${keys.platformKey}` },
      }),
    );
    if (res.status !== 200) throw new Error(`overview ${window}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ totals: { sessions: number }; series: unknown[] }>;
  };
  const time = async (fn: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < 10; i++) await fn(); // warm: plans, the key cache, JIT
    for (let i = 0; i < READS; i++) {
      t = performance.now();
      await fn();
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b);
  };
  const floor = await time(() => sql`select 1`);
  console.log(`floor: select 1 round trip p50 ${pct(floor, 50).toFixed(2)} ms, p99 ${pct(floor, 99).toFixed(2)} ms`);
  for (const window of args["newer-only"] ? [] : ["1h", "24h", "7d", "30d"]) {
    const answer = await read(window);
    const times = await time(() => read(window));
    console.log(
      `overview ${window.padStart(3)}: p50 ${pct(times, 50).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms (floor p99 ${pct(floor, 99).toFixed(2)} ms); ${answer.series.length} points, ${answer.totals.sessions.toLocaleString("en")} sessions`,
    );
  }
  // The reads the platform gained since (bench/lib/seed-newer.ts seeds what they read).
  const get = async (path: string) => {
    const res = await app.handle(
      new Request(`http://bench/api/v1${path}`, { headers: { authorization: `Token ${keys.platformKey}` } }),
    );
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const [evaluator] = await sql<{ id: string }[]>`
    select id from evaluators where tenant_id = ${keys.tenantId} and name = ${SEED_EVALUATOR}`;
  const recent = (
    await sql<{ session_id: string }[]>`
      select session_id from sessions where tenant_id = ${keys.tenantId} and session_id like 'seed-%'
      order by last_activity_at desc limit 1000`
  ).map((r) => r.session_id);
  const pick = () => recent[Math.floor(Math.random() * recent.length)];
  const newer: Array<[string, () => string]> = [
    ...["1h", "24h", "7d"].map((w): [string, () => string] => [
      `ledger ${w}`,
      () => `/ledger/${keys.service}?window=${w}`,
    ]),
    ["cost breakdown of a session", () => `/telemetry/otel/sessions/${keys.service}/${pick()}/cost-breakdown`],
    ...(evaluator
      ? ([
          ["evaluators of the service", () => `/evaluators?serviceName=${keys.service}`],
          ["evaluations, latest 50", () => `/evaluators/${evaluator.id}/evaluations?limit=50`],
          ["evaluations, failed, latest 50", () => `/evaluators/${evaluator.id}/evaluations?status=failed&limit=50`],
          ["evaluator agreement", () => `/evaluators/${evaluator.id}/agreement`],
        ] as Array<[string, () => string]>)
      : []),
  ];
  for (const [name, path] of newer) {
    const times = await time(() => get(path()));
    console.log(
      `${name}: p50 ${pct(times, 50).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms (floor p99 ${pct(floor, 99).toFixed(2)} ms); load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
  }
} finally {
  await database.close();
  await pg.stop();
}
process.exit(0);
