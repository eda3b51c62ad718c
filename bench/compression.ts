/**
 * `bun run bench/compression.ts [--rows 20000] [--rounds 3]`: TOAST compression of trace
 * payloads, pglz (Postgres' default) against lz4, and jsonb against json (text): Postgres CPU
 * per row for a COPY of the bench's realistic payloads, bytes on disk per row, and the CPU of
 * reading one field of every payload back.
 * Rounds alternate the two on one scratch cluster.
 */
import { parseArgs } from "node:util";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { runBench } from "./lib/harness";
import { copyField, cpuByProcess } from "./lib/proc";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: { rows: { type: "string", default: "20000" }, rounds: { type: "string", default: "3" } },
});
const ROWS = Number(args.rows);
await runBench("compression", { poolMax: 2 }, async (bench) => {
  const { sql } = bench.database;
  const templates = makeTemplates(200);
  const bodies = Array.from({ length: ROWS }, (_, i) =>
    templates[i % templates.length].replace("__SESSION__", `s-${i}`),
  );
  const pm = bench.pg.pid();
  const cpu = () => cpuByProcess({}, pm).postgres;
  const raw = bodies.reduce((s, b) => s + b.length, 0) / ROWS;
  console.log(`${ROWS} payloads per round, raw JSON ${Math.round(raw)} bytes each on average`);
  // Trace rows as the pipeline writes them: inserted, then updated twice (matured, published).
  // Inline, each update copies the compressed payload into a new tuple (and, not being HOT, an
  // entry into every index); out of line (toast_tuple_target = 128), only its TOAST pointer.
  for (let r = 0; r < Number(args.rounds); r++) {
    for (const target of [0, 128]) {
      await sql.unsafe(
        `drop table if exists t; create table t (like traces including defaults including indexes)${target ? ` with (toast_tuple_target = ${target})` : ""}`,
      );
      const ids = Array.from({ length: ROWS }, () => crypto.randomUUID());
      const c0 = cpu();
      const now = new Date().toISOString();
      await pipeline(
        Readable.from(
          (function* () {
            for (let i = 0; i < ROWS; i += 500) {
              yield bodies
                .slice(i, i + 500)
                .map(
                  (b, k) =>
                    [
                      ids[i + k],
                      crypto.randomUUID(),
                      crypto.randomUUID(),
                      crypto.randomUUID(),
                      `t-${i + k}`,
                      `s-${i + k}`,
                      "bench",
                      "openai",
                      "gpt-4o-mini",
                      now,
                      now,
                      copyField(b),
                      now,
                    ].join("\t") + "\n",
                )
                .join("");
            }
          })(),
        ),
        await sql`copy t (id, tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time, payload, received_at) from stdin`.writable(),
      );
      const c1 = cpu();
      for (let i = 0; i < ROWS; i += 500)
        await sql`update t set status = 'matured', maturation_count = 1, matured_at = now() where id = any(${ids.slice(i, i + 500)}::uuid[])`;
      for (let i = 0; i < ROWS; i += 500)
        await sql`update t set published_count = 1 where id = any(${ids.slice(i, i + 500)}::uuid[])`;
      const c2 = cpu();
      await sql`vacuum t`;
      const [{ bytes }] = await sql<{ bytes: string }[]>`select pg_total_relation_size('t')::text as bytes`;
      const c3 = cpu();
      await sql`select count(*) from t where payload->'responses'->0->>'model' is not null`;
      const read = cpu() - c3;
      const us = (x: number) => Math.round((x * 1e6) / ROWS);
      console.log(
        `round ${r + 1} trace rows, ${target ? `toast_tuple_target=${target}` : "default (inline)"}: insert ${us(c1 - c0)} us/row, two updates ${us(c2 - c1)} us/row, read a payload field ${us(read)} us/row, ${Math.round(Number(bytes) / ROWS)} bytes/row with indexes`,
      );
    }
  }
  for (let r = 0; r < Number(args.rounds); r++) {
    for (const [method, type] of [
      ["pglz", "jsonb"],
      ["lz4", "jsonb"],
      ["pglz", "json"],
    ]) {
      const made = await sql
        .unsafe(`drop table if exists c; create table c (id int, payload ${type} compression ${method})`)
        .then(
          () => true,
          (err) => (console.log(`${type} ${method}: ${err.message}`), false),
        );
      if (!made) continue;
      const c0 = cpu();
      await pipeline(
        Readable.from(
          (function* () {
            for (let i = 0; i < ROWS; i += 500)
              yield bodies
                .slice(i, i + 500)
                .map((b, k) => `${i + k}\t${copyField(b)}\n`)
                .join("");
          })(),
        ),
        await sql`copy c from stdin`.writable(),
      );
      const write = cpu() - c0;
      const [{ bytes }] = await sql<{ bytes: string }[]>`select pg_total_relation_size('c')::text as bytes`;
      const c1 = cpu();
      await sql`select count(*) from c where payload->'responses'->0->>'model' is not null`;
      const read = cpu() - c1;
      console.log(
        `round ${r + 1} ${type} ${method}: write ${Math.round((write * 1e6) / ROWS)} us/row, read responses[0].model back ${Math.round((read * 1e6) / ROWS)} us/row, ${Math.round(Number(bytes) / ROWS)} bytes/row on disk (${(Number(bytes) / ROWS / raw).toFixed(2)}x raw)`,
      );
    }
  }
});
