/**
 * `bun run bench/app-compression.ts [--rows 5000]`: would compressing trace payloads in the app
 * beat Postgres' own TOAST compression? For the bench's realistic payloads: bytes per payload
 * and CPU per payload of gzip / deflate-raw at levels 1 and 6 (node:zlib, which Bun and Deno
 * both provide; CompressionStream is the same deflate), next to what Postgres stores for the
 * same payload as jsonb with pglz and with lz4 (`pg_column_size`, a scratch cluster), and the
 * Postgres CPU of inserting them each way.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { deflateRawSync, gunzipSync, gzipSync, inflateRawSync } from "node:zlib";
import { createDatabase } from "@cellar/shared/db/client";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { cpuByProcess, postmasterPid } from "./lib/proc";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({ options: { rows: { type: "string", default: "5000" } } });
const ROWS = Number(args.rows);
const templates = makeTemplates(200);
const bodies = Array.from({ length: ROWS }, (_, i) => templates[i % templates.length].replace("__SESSION__", `s-${i}`));
const raw = bodies.reduce((s, b) => s + Buffer.byteLength(b), 0) / ROWS;
console.log(
  `${ROWS} payloads, raw JSON ${Math.round(raw)} bytes each on average (load ${(await import("node:os")).loadavg()[0].toFixed(1)})`,
);

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const codecs: Array<[string, (b: Buffer) => Buffer, (b: Buffer) => Buffer]> = [
  ["gzip-1", (b) => gzipSync(b, { level: 1 }), gunzipSync],
  ["gzip-6", (b) => gzipSync(b, { level: 6 }), gunzipSync],
  ["deflate-raw-1", (b) => deflateRawSync(b, { level: 1 }), inflateRawSync],
  ["deflate-raw-6", (b) => deflateRawSync(b, { level: 6 }), inflateRawSync],
];
const buffers = bodies.map((b) => Buffer.from(b));
for (const [name, enc, dec] of codecs) {
  let c0 = cpuUs();
  const packed = buffers.map(enc);
  const encUs = (cpuUs() - c0) / ROWS;
  c0 = cpuUs();
  for (const p of packed) dec(p);
  const decUs = (cpuUs() - c0) / ROWS;
  const bytes = packed.reduce((s, p) => s + p.length, 0) / ROWS;
  console.log(
    `${name.padEnd(14)} ${Math.round(bytes)} bytes (${(bytes / raw).toFixed(2)}x raw); compress ${encUs.toFixed(1)} us, decompress ${decUs.toFixed(1)} us per payload (app CPU)`,
  );
}

const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-appcomp-"));
const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
const { sql, close } = createDatabase(pg.url, { max: 2 });
try {
  const pm = postmasterPid(join(scratch, "pg"));
  const pgCpu = () => cpuByProcess({}, pm).postgres ?? 0;
  const chunks = (n: number) => Array.from({ length: Math.ceil(ROWS / n) }, (_, i) => bodies.slice(i * n, (i + 1) * n));
  for (const method of ["pglz", "lz4"]) {
    try {
      await sql.unsafe(`drop table if exists c; create table c (p jsonb compression ${method})`);
    } catch (err) {
      console.log(`postgres jsonb ${method.padEnd(5)} not available here: ${(err as Error).message}`);
      continue;
    }
    const c0 = pgCpu();
    for (const part of chunks(500))
      await sql`insert into c (p) select x::jsonb from unnest(${sql.array(part)}::text[]) as x`;
    const us = ((pgCpu() - c0) * 1e6) / ROWS;
    const [{ size }] = await sql<{ size: number }[]>`select avg(pg_column_size(p))::float8 as size from c`;
    console.log(
      `postgres jsonb ${method.padEnd(5)} ${Math.round(size)} bytes (${(size / raw).toFixed(2)}x raw); insert ${Math.round(us)} us Postgres CPU per payload`,
    );
  }
  await sql.unsafe("drop table if exists c; create table c (p bytea)");
  const packed = buffers.map((b) => deflateRawSync(b, { level: 1 }));
  const c0 = pgCpu();
  for (let i = 0; i < packed.length; i += 500)
    await sql`insert into c (p) select decode(x, 'base64') from unnest(${sql.array(packed.slice(i, i + 500).map((p) => p.toString("base64")))}::text[]) as x`;
  const us = ((pgCpu() - c0) * 1e6) / ROWS;
  const [{ size }] = await sql<{ size: number }[]>`select avg(pg_column_size(p))::float8 as size from c`;
  console.log(
    `postgres bytea of deflate-raw-1 ${Math.round(size)} bytes (${(size / raw).toFixed(2)}x raw); insert ${Math.round(us)} us Postgres CPU per payload (base64 decoded in Postgres)`,
  );
} finally {
  await close();
  await pg.stop();
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
