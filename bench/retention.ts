/**
 * `bun run bench/retention.ts --data-dir <cluster seeded by bench/seed.ts> [--days 15]`: the
 * retention job (apps/processor/src/retention/retention.ts) on a seeded cluster whose traces
 * are spread over 30 days: rows removed per second, the longest single delete transaction (the
 * longest any lock is held), and disk before, after, after a plain VACUUM (what autovacuum
 * does), and after re-seeding --reseed traces (space reuse, i.e. bloat). Deletes data: run it last.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { createDatabase } from "@cellar/shared/db/client";
import { runRetention } from "../apps/processor/src/retention/retention";
import { fastSettings } from "./e2e/cluster";
import { runBench } from "./lib/harness";
import { cpuByProcess } from "./lib/proc";

const { values: args } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    days: { type: "string", default: "15" },
    batch: { type: "string", default: "500" },
    reseed: { type: "string", default: "100000" },
  },
});
if (!args["data-dir"]) throw new Error("--data-dir is required");
const dataDir = resolve(args["data-dir"]);
await runBench("retention", { dataDir, poolMax: 2 }, async (bench) => {
  const { pg, database } = bench;
  const { sql } = database;
  const size = async () =>
    Number((await sql<{ b: string }[]>`select pg_database_size(current_database())::text as b`)[0].b);
  const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;
  await fastSettings(sql);
  const [{ n: before }] = await sql<{ n: number }[]>`select count(*)::int as n from traces`;
  const s0 = await size();
  const pm = pg.pid();
  const c0 = cpuByProcess({}, pm).postgres;
  const t0 = performance.now();
  const r = await runRetention(sql, {
    defaults: { free: Number(args.days), pro: Number(args.days) },
    batchSize: Number(args.batch),
  });
  const secs = (performance.now() - t0) / 1000;
  const cpu = cpuByProcess({}, pm).postgres - c0;
  const [{ n: after }] = await sql<{ n: number }[]>`select count(*)::int as n from traces`;
  const removed = before - after;
  const s1 = await size();
  console.log(
    `retention (${args.days} days, batches of ${args.batch}): ${r.sessions} sessions with ${removed} traces removed in ${secs.toFixed(1)} s = ${Math.round(removed / secs)} traces/s, Postgres ${Math.round((cpu * 1e6) / Math.max(1, removed))} us CPU per trace removed; longest batch ${Math.round(r.longestBatchMs)} ms; ${JSON.stringify(r)}`,
  );
  await sql`vacuum`;
  const s2 = await size();
  console.log(
    `disk: before ${gb(s0)}, right after ${gb(s1)}, after vacuum ${gb(s2)} (space is kept for reuse, not returned)`,
  );
  await database.close();
  await pg.stop();
  // Re-seed --reseed traces: in freed space, the database should barely grow.
  const reseed = Math.min(Number(args.reseed), removed);
  execFileSync(process.execPath, ["bench/seed.ts", "--data-dir", dataDir, "--traces", String(after + reseed)], {
    cwd: resolve(import.meta.dir, ".."),
    stdio: ["ignore", "ignore", "inherit"],
  });
  await pg.start();
  const db2 = createDatabase(pg.url, { max: 1 });
  const s3 = Number((await db2.sql<{ b: string }[]>`select pg_database_size(current_database())::text as b`)[0].b);
  console.log(
    `after re-seeding ${reseed} traces: ${gb(s3)}; growth ${Math.round((s3 - s2) / reseed)} bytes per re-seeded trace, against ${Math.round(s0 / before)} bytes per trace before retention`,
  );
  await db2.close();
});
