/**
 * `bun run bench/spans.ts [--traces 4000] [--session 1000] [--reads 200]`: spans derived from the
 * stored payload (migration 0017) against span rows, in one run against one scratch Postgres.
 *
 * Write: the same traces' spans inserted as the writer before 0017 did (`spans` rows: jsonb
 * attributes, three indexes), as it does now (`span_ids`: one narrow row per span), as the
 * alternative of one row per trace (span ids sharing a per-trace prefix), and the floor: one
 * bare row per trace into a table without an index. Postgres CPU per trace (from /proc) and
 * bytes per trace (relation sizes), in batches of 500 traces as the processor writes them.
 *
 * Read, p50/p99 ms over --reads calls of the platform's own functions: the spans of a trace, a
 * 500-span page of a session of --session traces (first page and a deep cursor page), the span
 * by id; each for traces with stored rows and for derived ones, beside the floor of reading one
 * trace row by its key in the same run.
 */
import { parseArgs } from "node:util";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import type { IngestMessage } from "@cellar/shared/payloads";
import { deriveSpans, spanIdKey } from "@cellar/shared/spans";
import {
  insertLegacySpanRows,
  insertSpanIds,
  type LegacyTrace,
  legacyTraces,
  type SpanIdRow,
} from "./lib/legacy-spans";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { sessionSpans } from "../apps/platform/src/sessions/telemetry";
import { loadSession } from "../apps/platform/src/sessions/service";
import { findSpans, traceSpans } from "../apps/platform/src/traces/service";
import { SPAN_COLUMNS } from "../apps/platform/src/traces/model";
import { prepared } from "../apps/platform/src/query/db";
import { runBench } from "./lib/harness";
import { cpuByProcess } from "./lib/proc";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    traces: { type: "string", default: "4000" },
    session: { type: "string", default: "1000" },
    reads: { type: "string", default: "200" },
  },
});
const N = Number(args.traces);
const BIG = Number(args.session);
const READS = Number(args.reads);
const BATCH = 500;

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const fmt = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(2)} / p99 ${pct(xs, 0.99).toFixed(2)} ms`;

await runBench("spans", {}, async (bench) => {
  const { sql } = bench.database;
  const tenant = await bench.tenant({ name: "spans" });
  const templates = makeTemplates(200);
  // Traces under four prefixes: "old-*" and "new-*" sessions of 5, and two big sessions.
  const msg = (i: number, session: string, traceId: string): IngestMessage => {
    const payload = JSON.parse(templates[i % 200].replace("__SESSION__", session));
    const start = Date.parse("2026-11-01T00:00:00Z") + i * 20_000;
    payload.start_time = new Date(start).toISOString();
    payload.end_time = new Date(start + 900).toISOString();
    payload.trace_id = traceId;
    return {
      kind: "trace",
      messageId: `m-${traceId}`,
      tenantId: tenant.tenantId,
      serviceName: "bot",
      receivedAt: new Date().toISOString(),
      payload,
    };
  };
  const messages: IngestMessage[] = [];
  for (let i = 0; i < N; i++) {
    const side = i % 2 ? "new" : "old";
    messages.push(msg(i, `${side}-s${Math.floor(i / 10)}`, `${side}-${i}`));
  }
  for (let i = 0; i < BIG; i++) {
    messages.push(msg(i, "big-old", `big-old-${i}`));
    messages.push(msg(i, "big-new", `big-new-${i}`));
  }
  for (let i = 0; i < messages.length; i += BATCH) await writeIngestBatch(sql, messages.slice(i, i + BATCH));

  const traces = await legacyTraces(sql);
  const spansOf = new Map(traces.map((t) => [t.id, deriveSpans(t.trace_id, decodePayload(t) as never)]));
  const spanIdRowsOf = (chunk: LegacyTrace[]): SpanIdRow[] =>
    chunk.flatMap((t) =>
      spansOf.get(t.id)!.map((s) => ({
        tenant_id: t.tenant_id,
        trace_service_id: t.trace_service_id,
        trace_pk: t.id,
        span_id: spanIdKey(s.spanId)!,
      })),
    );
  const old = traces.filter((t) => t.trace_id.startsWith("old-") || t.trace_id.startsWith("big-old-"));
  const fresh = traces.filter((t) => t.trace_id.startsWith("new-") || t.trace_id.startsWith("big-new-"));
  const svc = { id: traces[0].trace_service_id, name: "bot" };

  // Scratch tables for the alternative and the floor.
  await sql`create table span_prefix_bench (tenant_id uuid not null, trace_service_id uuid not null, prefix int4 not null, trace_pk uuid not null,
    primary key (trace_service_id, prefix, trace_pk, tenant_id))`;
  await sql`create table floor_bench (tenant_id uuid, trace_pk uuid, trace_service_id uuid)`;
  const size = async (table: string) =>
    Number((await sql<{ b: string }[]>`select pg_total_relation_size(${table}::regclass)::text as b`)[0].b);

  const variants: Record<string, (chunk: LegacyTrace[]) => Promise<unknown>> = {
    "spans rows (before 0017)": (chunk) => insertLegacySpanRows(sql, chunk),
    "span_ids rows (after)": (chunk) => insertSpanIds(sql, spanIdRowsOf(chunk)),
    "one prefix row per trace (alternative)": (chunk) => {
      const rows = chunk.map((t, i) => ({
        tenant_id: t.tenant_id,
        trace_service_id: t.trace_service_id,
        trace_pk: t.id,
        prefix: (i * 2654435761) | 0,
      }));
      return sql`
        insert into span_prefix_bench (tenant_id, trace_service_id, prefix, trace_pk)
        select tenant_id, trace_service_id, prefix, trace_pk
        from json_to_recordset(${sql.json(rows as never)}::json) as x(tenant_id uuid, trace_service_id uuid, prefix int4, trace_pk uuid)
        order by trace_service_id, prefix on conflict do nothing`;
    },
    "floor: one bare row per trace, no index": (chunk) => {
      const rows = chunk.map((t) => ({ tenant_id: t.tenant_id, trace_pk: t.id, trace_service_id: t.trace_service_id }));
      return sql`
        insert into floor_bench (tenant_id, trace_pk, trace_service_id)
        select tenant_id, trace_pk, trace_service_id from json_to_recordset(${sql.json(rows as never)}::json) as x(tenant_id uuid, trace_pk uuid, trace_service_id uuid)`;
    },
  };
  const tables: Record<string, string> = {
    "spans rows (before 0017)": "spans",
    "span_ids rows (after)": "span_ids",
    "one prefix row per trace (alternative)": "span_prefix_bench",
    "floor: one bare row per trace, no index": "floor_bench",
  };
  // The old traces get span rows (and lose their span_ids rows): the stored shape before 0017.
  await sql`delete from span_ids where trace_pk = any(${old.map((t) => t.id)}::uuid[])`;
  console.log(
    `write, ${old.length} traces in batches of ${BATCH} (Postgres CPU from /proc, bytes from relation sizes):`,
  );
  for (const [name, run] of Object.entries(variants)) {
    if (name.startsWith("span_ids")) await sql`delete from span_ids`;
    await sql`vacuum ${sql(tables[name])}`;
    const bytes0 = name.startsWith("span_ids") ? await size("span_ids") : await size(tables[name]);
    const c0 = cpuByProcess({}, bench.pg.pid());
    const t0 = performance.now();
    for (let i = 0; i < old.length; i += BATCH) await run(old.slice(i, i + BATCH));
    const ms = performance.now() - t0;
    const c1 = cpuByProcess({}, bench.pg.pid());
    const bytes = (await size(tables[name])) - bytes0;
    console.log(
      `  ${name.padEnd(42)} postgres ${Math.round(((c1.postgres - c0.postgres) * 1e6) / old.length)} us/trace, wall ${Math.round((ms * 1000) / old.length)} us/trace, ${Math.round(bytes / old.length)} B/trace`,
    );
  }
  // Leave the stored shape: old traces with rows only, new ones with span_ids only.
  await sql`delete from span_ids where trace_pk = any(${old.map((t) => t.id)}::uuid[])`;
  await insertSpanIds(sql, spanIdRowsOf(fresh));
  await sql`analyze`;

  const time = async (f: (i: number) => Promise<unknown>) => {
    const out: number[] = [];
    for (let i = 0; i < READS; i++) {
      const t0 = performance.now();
      await f(i);
      out.push(performance.now() - t0);
    }
    return out;
  };
  const pick = (list: LegacyTrace[], i: number) => list[(i * 7919) % list.length];
  const oldSmall = old.filter((t) => t.trace_id.startsWith("old-"));
  const newSmall = fresh.filter((t) => t.trace_id.startsWith("new-"));
  const floor = await time(
    (i) =>
      sql`select id, trace_id, start_time from traces where trace_service_id = ${svc.id} and trace_id = ${pick(newSmall, i).trace_id}`,
  );
  console.log(`read, ${READS} calls each (in-process platform functions, one pool):`);
  console.log(`  floor: one trace row by its key                 ${fmt(floor)}`);
  // The code before 0017: one query on the rows.
  const before = (where: string, params: unknown[]) =>
    prepared(
      sql,
      `select ${SPAN_COLUMNS} from spans sp where ${where} order by sp.start_time, sp.span_id limit 501`,
      params as never[],
    );
  console.log(
    `  spans of a trace, before 0017 (rows, one query)   ${fmt(
      await time(async (i) => {
        const [t] =
          await sql`select id from traces where trace_service_id = ${svc.id} and trace_id = ${pick(oldSmall, i).trace_id}`;
        return before("sp.trace_pk = $1", [t.id]);
      }),
    )}`,
  );
  console.log(
    `  span by id, before 0017 (rows, one query)         ${fmt(await time((i) => before("sp.trace_service_id = any($1::uuid[]) and sp.span_id = $2", [[svc.id], spansOf.get(pick(oldSmall, i).id)![i % 2].spanId])))}`,
  );
  const bigOld = await loadSession(sql, svc.id, "big-old");
  console.log(
    `  session spans, before 0017 (rows, one query)      first page of 500 ${fmt(await time(() => before("sp.session_pk = $1", [bigOld.pk])))}`,
  );
  for (const [label, list] of [
    ["stored rows", oldSmall],
    ["derived", newSmall],
  ] as const) {
    console.log(
      `  spans of a trace, ${label.padEnd(11)}                  ${fmt(await time((i) => traceSpans(sql, svc, pick(list, i).trace_id)))}`,
    );
    console.log(
      `  span by id, ${label.padEnd(11)}                        ${fmt(
        await time((i) => {
          const t = pick(list, i);
          return findSpans(sql, [svc], spansOf.get(t.id)![i % 2].spanId);
        }),
      )}`,
    );
  }
  for (const [label, sessionId] of [
    ["stored rows", "big-old"],
    ["derived", "big-new"],
  ] as const) {
    const session = await loadSession(sql, svc.id, sessionId);
    const ctx = { sql, serviceName: "bot", session };
    const first = await time(() => sessionSpans(ctx, { limit: 500, offset: 0 }));
    const page1 = await sessionSpans(ctx, { limit: 500, offset: 0 });
    const page2 = await sessionSpans(ctx, { limit: 500, offset: 0, cursor: page1.pagination.nextCursor! });
    const deep = await time(() => sessionSpans(ctx, { limit: 500, offset: 0, cursor: page2.pagination.nextCursor! }));
    console.log(
      `  session spans (${BIG} traces), ${label.padEnd(11)} first page of 500 ${fmt(first)}; third page by cursor ${fmt(deep)}`,
    );
  }
});
