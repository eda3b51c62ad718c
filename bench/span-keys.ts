/**
 * `bun run bench/span-keys.ts [--traces 4000] [--reads 300] [--rounds 5]`: where a span id lives,
 * as `span_ids` rows (one per id, migrations 0017-0021) against the trace row's `span_keys` with
 * its GIN index (migration 0022), in one scratch Postgres. The same traces are written by the
 * real writer (new shape); half are then moved to rows as the writer before 0022 stored them.
 *
 * Bytes per trace of each shape (relation sizes), and the span-by-id read through the platform's
 * own `findSpans` for ids of each half, beside the floor of reading one trace row by its key;
 * p50 per round, interleaved, median over the rounds (the machine is shared: read the ratios).
 */
import { parseArgs } from "node:util";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { findSpans } from "../apps/platform/src/traces/service";
import { storeSpanIdRows } from "./lib/legacy-spans";
import { runBench } from "./lib/harness";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    traces: { type: "string", default: "4000" },
    reads: { type: "string", default: "300" },
    rounds: { type: "string", default: "5" },
  },
});
const N = Number(args.traces);
const READS = Number(args.reads);
const ROUNDS = Number(args.rounds);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

await runBench("span-keys", {}, async (bench) => {
  const { sql } = bench.database;
  const tenant = await bench.tenant({ name: "span-keys" });
  const templates = makeTemplates(200);
  const messages: IngestMessage[] = [];
  for (let i = 0; i < N; i++) {
    const payload = JSON.parse(templates[i % 200].replace("__SESSION__", `s${Math.floor(i / 10)}`));
    const start = Date.parse("2026-11-01T00:00:00Z") + i * 20_000;
    payload.start_time = new Date(start).toISOString();
    payload.end_time = new Date(start + 900).toISOString();
    payload.trace_id = `${i % 2 ? "keys" : "rows"}-${i}`;
    messages.push({
      kind: "trace",
      messageId: `m-${i}`,
      tenantId: tenant.tenantId,
      serviceName: "bot",
      receivedAt: new Date().toISOString(),
      payload,
    } as IngestMessage);
  }
  for (let i = 0; i < messages.length; i += 500) await writeIngestBatch(sql, messages.slice(i, i + 500));
  const before = await sql<{ heap: string; gin: string }[]>`
    select pg_relation_size('traces')::text as heap, pg_relation_size('traces_span_keys_idx')::text as gin`;
  const rows = await sql<{ id: string }[]>`select id from traces where trace_id like 'rows-%' order by id`;
  await storeSpanIdRows(
    sql,
    rows.map((r) => r.id),
  );
  await sql`vacuum analyze`;
  const [size] = await sql<{ rows_bytes: string; keys_column: string; gin: string }[]>`
    select pg_total_relation_size('span_ids')::text as rows_bytes,
      (select sum(pg_column_size(span_keys)) from traces)::text as keys_column, pg_relation_size('traces_span_keys_idx')::text as gin`;
  const keysTraces = N - rows.length;
  console.log(
    `bytes per trace: span_ids rows ${Math.round(Number(size.rows_bytes) / rows.length)}; span_keys ${Math.round(
      Number(size.keys_column) / keysTraces + Number(before[0].gin) / N,
    )} (column ${Math.round(Number(size.keys_column) / keysTraces)} + GIN as written for all ${N} ${Math.round(Number(before[0].gin) / N)})`,
  );

  const svc = await sql<{ id: string; name: string }[]>`select id, name from trace_services where name = 'bot'`;
  const ids = async (prefix: string) =>
    (
      await sql<{ id: string }[]>`
      select lpad(to_hex(k), 16, '0') as id from (
        select unnest(span_keys) as k from traces where trace_id like ${`${prefix}-%`}
        union all select k.span_id from span_ids k join traces t on t.id = k.trace_pk where t.trace_id like ${`${prefix}-%`}) x
      order by random() limit ${READS}`
    ).map((r) => r.id);
  const rowIds = await ids("rows");
  const keyIds = await ids("keys");
  const pks = rows.slice(0, READS).map((r) => r.id);
  const time = async (f: (i: number) => Promise<unknown>) => {
    const xs: number[] = [];
    for (let i = 0; i < READS; i++) {
      const t0 = performance.now();
      await f(i);
      xs.push(performance.now() - t0);
    }
    return median(xs);
  };
  const figures = {
    floor: [] as number[],
    rows: [] as number[],
    keys: [] as number[],
    rowLookup: [] as number[],
    keyLookup: [] as number[],
  };
  const svcIds = svc.map((x) => x.id);
  const key = (hex: string) => BigInt.asIntN(64, BigInt(`0x${hex}`)).toString();
  for (let r = 0; r < ROUNDS; r++) {
    figures.floor.push(await time((i) => sql`select id, trace_id from traces where id = ${pks[i % pks.length]}`));
    // The lookup alone (the statement that differs), then the whole read with the span derived.
    figures.rowLookup.push(
      await time(
        (i) =>
          sql`select trace_pk from span_ids where trace_service_id = any(${svcIds}::uuid[]) and span_id = ${key(rowIds[i % rowIds.length])}::int8`,
      ),
    );
    figures.keyLookup.push(
      await time(
        (i) =>
          sql`select id from traces where span_keys @> array[${key(keyIds[i % keyIds.length])}::int8] and trace_service_id = any(${svcIds}::uuid[])`,
      ),
    );
    figures.rows.push(
      await time(async (i) => {
        if ((await findSpans(sql, svc, rowIds[i % rowIds.length])).length !== 1) throw new Error("span not found");
      }),
    );
    figures.keys.push(
      await time(async (i) => {
        if ((await findSpans(sql, svc, keyIds[i % keyIds.length])).length !== 1) throw new Error("span not found");
      }),
    );
  }
  const f = (xs: number[]) => median(xs).toFixed(3);
  console.log(
    `span by id, p50 ms (median of ${ROUNDS} rounds x ${READS}): floor (a trace row by its key) ${f(figures.floor)}; ` +
      `span_ids rows ${f(figures.rows)} (${(median(figures.rows) / median(figures.floor)).toFixed(1)}x floor); ` +
      `span_keys ${f(figures.keys)} (${(median(figures.keys) / median(figures.floor)).toFixed(1)}x floor); ` +
      `the lookup alone: span_ids ${f(figures.rowLookup)} (${(median(figures.rowLookup) / median(figures.floor)).toFixed(1)}x), ` +
      `span_keys GIN ${f(figures.keyLookup)} (${(median(figures.keyLookup) / median(figures.floor)).toFixed(1)}x)`,
  );
});
