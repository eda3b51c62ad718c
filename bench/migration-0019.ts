/**
 * `bun run bench/migration-0019.ts --data-dir <dir>`: what migration 0019 (every key and foreign
 * key widened by tenant_id) costs on a database seeded by bench/seed.ts (run the seed on the
 * code before 0019; this copies the cluster, the seed stays as it was). Prints each step's time
 * inside one rolled-back transaction, then runs the real migrator and prints its total beside
 * the same run's floor (one sequential read of every table it touches), the rows per table,
 * which tables the migration held ACCESS EXCLUSIVE, and the longest wait of a read and of a write
 * probing the tables meanwhile.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";

const { values: args } = parseArgs({ options: { "data-dir": { type: "string" } } });
if (!args["data-dir"] || !existsSync(join(resolve(args["data-dir"]), "PG_VERSION")))
  throw new Error("--data-dir <a cluster written by bench/seed.ts> is required");
const scratch = mkdtempSync(join(tmpdir(), "mig0019-"));
const dataDir = join(scratch, "pg");
// cp -a: the files stay the postgres OS user's (scripts/infra/postgres.ts).
execFileSync("cp", ["-a", resolve(args["data-dir"]), dataDir]);
rmSync(join(dataDir, "postmaster.pid"), { force: true });
const pg = await startEmbeddedPostgres({ dataDir, persistent: false });
const sql = postgres(pg.url, { max: 4, onnotice: () => {} });
const statements = readFileSync(join(MIGRATIONS_DIR, "0019_tenant_keys.sql"), "utf8")
  .split("--> statement-breakpoint")
  .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
  .filter(Boolean);
const tables = [
  ...new Set(statements.flatMap((s) => [...s.matchAll(/(?:TABLE|ON|REFERENCES) "([a-z_]+)"/g)].map((m) => m[1]))),
].sort();
try {
  await sql`vacuum analyze`;
  const rows = new Map<string, number>();
  let t0 = performance.now();
  for (const t of tables) rows.set(t, (await sql.unsafe(`select count(*)::int as n from "${t}"`))[0].n);
  const floor = performance.now() - t0;
  const traces = rows.get("traces") ?? 0;
  const indexBytes = async () =>
    Number(
      (
        await sql.unsafe(
          `select sum(pg_indexes_size(c.oid))::bigint as b from pg_class c where c.relname in (${tables.map((t) => `'${t}'`).join(",")})`,
        )
      )[0].b,
    );
  const indexesBefore = await indexBytes();
  console.log(`rows: ${[...rows].map(([t, n]) => `${t} ${n.toLocaleString("en")}`).join(", ")}`);

  // Step by step, rolled back: where the time goes.
  const steps: Array<[string, number]> = [];
  await sql
    .begin(async (tx) => {
      for (const s of statements) {
        const t = performance.now();
        await tx.unsafe(s);
        steps.push([s.slice(0, 110).replace(/\s+/g, " "), performance.now() - t]);
      }
      throw new Error("rollback");
    })
    .catch((e) => {
      if (e.message !== "rollback") throw e;
    });
  for (const [s, ms] of steps.sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`${(ms / 1000).toFixed(2).padStart(7)} s  ${s}`);

  // The real migrator, with a sampler of the locks it holds and two probes that read a trace's
  // spans and write a session row (what the platform and the processor do) and time their waits.
  const [probe] = await sql<{ trace_pk: string; session_pk: string }[]>`select trace_pk, session_pk from spans limit 1`;
  const held = new Set<string>();
  let sampling = true;
  const longest = { read: 0, write: 0 };
  const timed = async (kind: "read" | "write", run: () => Promise<unknown>) => {
    while (sampling) {
      const t = performance.now();
      await run();
      longest[kind] = Math.max(longest[kind], performance.now() - t);
      await Bun.sleep(50);
    }
  };
  const probes = [
    (async () => {
      while (sampling) {
        const locks = await sql<{ rel: string }[]>`
          select c.relname as rel from pg_locks l join pg_class c on c.oid = l.relation
          where l.mode = 'AccessExclusiveLock' and l.granted and c.relkind = 'r' and l.pid <> pg_backend_pid()`;
        for (const l of locks) held.add(l.rel);
        await Bun.sleep(100);
      }
    })(),
    timed("read", () => sql`select count(*) from spans where trace_pk = ${probe.trace_pk}`),
    timed("write", () => sql`update sessions set labels = labels where id = ${probe.session_pk}`),
  ];
  await Bun.sleep(300);
  t0 = performance.now();
  await runMigrations(pg.url);
  const ms = performance.now() - t0;
  sampling = false;
  await Promise.all(probes);
  const [{ n }] = await sql`select count(*)::int as n from traces`;
  if (n !== traces) throw new Error(`traces ${traces} before, ${n} after`);
  console.log(
    `${traces.toLocaleString("en")} traces: migration 0019 ${(ms / 1000).toFixed(1)} s = ${((ms / 1000) * (1e6 / Math.max(1, traces))).toFixed(0)} s per million traces; floor (count(*) of every table it touches) ${(floor / 1000).toFixed(1)} s; ratio ${(ms / floor).toFixed(1)}x; load ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log(
    `longest wait during it: a read of spans ${(longest.read / 1000).toFixed(1)} s, a write of sessions ${(longest.write / 1000).toFixed(1)} s`,
  );
  const indexesAfter = await indexBytes();
  console.log(
    `indexes of these tables: ${(indexesBefore / 2 ** 20).toFixed(1)} MB before, ${(indexesAfter / 2 ** 20).toFixed(1)} MB after (${(((indexesAfter - indexesBefore) / indexesBefore) * 100).toFixed(0)}%)`,
  );
  console.log(`held ACCESS EXCLUSIVE (sampled): ${[...held].sort().join(", ")}`);
} finally {
  await sql.end({ timeout: 5 });
  await pg.stop();
  rmSync(scratch, { recursive: true, force: true });
}
