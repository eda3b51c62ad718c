/**
 * `bun run bench/session-analysis-write.ts --data-dir <seeded cluster> [--index NAME]`: what one
 * index of session_analyses costs the write path. A maturation rewrites its session's analysis
 * (every rollup and the cost change, so the update is not HOT and every index gets an entry);
 * here the same 2,000 analyses are updated that way in blocks, in turns with the index and
 * without it (dropped inside the block's transaction), every block rolled back so the cluster
 * is unchanged. The "with" blocks drop a throwaway index instead, so both pay the same DDL.
 * Figure: the backend's CPU per updated row (from /proc), the two side by side.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { runBench } from "./lib/harness";

const { values: args } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    index: { type: "string", default: "session_analyses_cost_count_idx" },
    rows: { type: "string", default: "2000" },
    rounds: { type: "string", default: "10" },
  },
});
if (!args["data-dir"]) throw new Error("--data-dir <cluster seeded by bench/seed.ts> is required");
const ROWS = Number(args.rows);
const ROUNDS = Number(args.rounds);
const INDEX = args.index!;
if (!/^[a-z_0-9]+$/.test(INDEX)) throw new Error("--index: an index name");

await runBench("analysis-write", { dataDir: resolve(args["data-dir"]) }, async (bench) => {
  const sql = bench.database.sql;
  const conn = await sql.reserve();
  try {
    const [{ pid }] = await conn<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const cpuMs = () => {
      const f = readFileSync(`/proc/${pid}/stat`, "utf8");
      const x = f.slice(f.lastIndexOf(")") + 2).split(" ");
      return (Number(x[11]) + Number(x[12])) * 10;
    };
    await conn`create table if not exists bench_write_dummy (a int)`;
    await conn`create index if not exists bench_write_dummy_idx on bench_write_dummy (a)`;
    const pks = (
      await conn<{ pk: string }[]>`select session_pk as pk from session_analyses tablesample system (1) limit ${ROWS}`
    ).map((r) => r.pk);
    const used: Record<string, number> = { with: 0, without: 0 };
    const block = async (variant: "with" | "without") => {
      await conn`begin`;
      try {
        await conn.unsafe(`drop index ${variant === "with" ? "bench_write_dummy_idx" : INDEX}`);
        const c0 = cpuMs();
        for (const pk of pks)
          await conn`update session_analyses set cost_usd = cost_usd + 1e-7, duration_ms = duration_ms + 1,
            total_tokens = total_tokens + 1, computed_at = now(), maturation_count = maturation_count + 1
            where session_pk = ${pk}`;
        return cpuMs() - c0;
      } finally {
        await conn`rollback`;
      }
    };
    await block("with"); // warms the rows' pages
    for (let r = 0; r < ROUNDS; r++)
      for (const v of r % 2 ? (["without", "with"] as const) : (["with", "without"] as const))
        used[v] += await block(v);
    const per = (ms: number) => (ms * 1000) / (ROUNDS * pks.length);
    console.log(
      `update of a session analysis, backend CPU per row (${pks.length} rows x ${ROUNDS} rounds, load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}): with ${INDEX} ${per(used.with).toFixed(1)} us, without ${per(used.without).toFixed(1)} us (+${(
        (100 * (used.with - used.without)) / used.without
      ).toFixed(1)}%)`,
    );
    await conn`drop table bench_write_dummy`;
  } finally {
    conn.release();
  }
});
