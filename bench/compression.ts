/**
 * `bun run bench/compression.ts [--rows 20000] [--rounds 3]`: TOAST compression of trace
 * payloads, pglz (Postgres' default) against lz4, and jsonb against json (text): Postgres CPU
 * per row for a COPY of the bench's realistic payloads, bytes on disk per row, and the CPU of
 * reading one field of every payload back.
 * Rounds alternate the two on one scratch cluster.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createDatabase } from "@cellar/shared/db/client";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { copyField, cpuByProcess, cpuDelta, postmasterPid } from "./lib/proc";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({ options: { rows: { type: "string", default: "20000" }, rounds: { type: "string", default: "3" } } });
const ROWS = Number(args.rows);
const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-compression-"));
const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
const { sql, close } = createDatabase(pg.url, { max: 2 });
try {
  const templates = makeTemplates(200);
  const bodies = Array.from({ length: ROWS }, (_, i) => templates[i % templates.length].replace("__SESSION__", `s-${i}`));
  const pm = postmasterPid(join(scratch, "pg"));
  const cpu = () => cpuByProcess({}, pm).postgres;
  const raw = bodies.reduce((s, b) => s + b.length, 0) / ROWS;
  console.log(`${ROWS} payloads per round, raw JSON ${Math.round(raw)} bytes each on average`);
  for (let r = 0; r < Number(args.rounds); r++) {
    for (const [method, type] of [["pglz", "jsonb"], ["lz4", "jsonb"], ["pglz", "json"]]) {
      const made = await sql.unsafe(`drop table if exists c; create table c (id int, payload ${type} compression ${method})`).then(() => true, (err) => (console.log(`${type} ${method}: ${err.message}`), false));
      if (!made) continue;
      const c0 = cpu();
      await pipeline(Readable.from((function* () {
        for (let i = 0; i < ROWS; i += 500) yield bodies.slice(i, i + 500).map((b, k) => `${i + k}\t${copyField(b)}\n`).join("");
      })()), await sql`copy c from stdin`.writable());
      const write = cpu() - c0;
      const [{ bytes }] = await sql<{ bytes: string }[]>`select pg_total_relation_size('c')::text as bytes`;
      const c1 = cpu();
      await sql`select count(*) from c where payload->'responses'->0->>'model' is not null`;
      const read = cpu() - c1;
      console.log(`round ${r + 1} ${type} ${method}: write ${Math.round((write * 1e6) / ROWS)} us/row, read responses[0].model back ${Math.round((read * 1e6) / ROWS)} us/row, ${Math.round(Number(bytes) / ROWS)} bytes/row on disk (${(Number(bytes) / ROWS / raw).toFixed(2)}x raw)`);
    }
  }
} finally {
  await close();
  await pg.stop();
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
