import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import type postgres from "postgres";
import { MIGRATIONS_DIR } from "@cellar/shared/db/client";
import {
  compactStoredMetrics,
  storedTraceMetrics,
  TRACE_METRICS_BASE_KEYS,
  TRACE_METRICS_SQL,
  traceMetricBaseValueSql,
  traceMetricsBaseFieldsSql,
  type TraceMetricsBaseFields,
} from "@cellar/shared/db/trace-metrics";
import { persistTraceAnalyses, persistTranscriptItems } from "../apps/processor/src/maturation/persist";
import type { SessionRow } from "../apps/processor/src/maturation/store";
import type { TranscriptItem } from "../apps/processor/src/analysis/transcript";
import type { TraceRow } from "../apps/processor/src/maturation/store";
import { callPaced, readEndpoints, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { createTestStack, type TestStack } from "./helpers/stack";
import { storeSpanIdRows } from "../bench/lib/legacy-spans";
import { storeMetricsInFull } from "./helpers/storage-shape";
import { itemRows } from "./helpers/transcript-shapes";
import { loadTraceFacts } from "@cellar/shared/monitors/facts";

/**
 * Upgrade without loss (issue 28, second round, migration 0021): a trace's metrics stored as what
 * differs from its trace row's base. Traces whose metrics are stored in full (every row written
 * before the migration) answer every platform read byte for byte as the same traces stored as
 * deltas, before and after the migration runs on them; any metrics object the analysis may
 * produce reads back as it was written.
 */
let stack: TestStack;
let f: PlatformFixture;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
});
afterAll(() => stack.stop());

const S = "support-bot";
const filtered = (body: Record<string, unknown>) => ({
  method: "POST",
  path: "/telemetry/otel/traces/filtered",
  body: { serviceName: S, ...body },
});
const metric = (field: string, operator: string, value: unknown) =>
  filtered({ filters: [{ field: `metrics.${field}`, operator, value }] });
/** Every read endpoint, plus trace list filters on metrics keys the base sets and keys it does not. */
function endpoints(traceIds: string[]): Array<{ method: string; path: string; body?: unknown }> {
  return [
    ...readEndpoints(f),
    ...traceIds.flatMap((id) => [
      { method: "GET", path: `/telemetry/otel/trace/${id}?serviceName=${S}` },
      { method: "GET", path: `/telemetry/metrics/trace/${id}` },
    ]),
    metric("durationMs", "gt", 0),
    metric("promptTokens", "gte", 1),
    metric("cachedTokens", "equals", 0),
    metric("costUsd", "gt", 0),
    metric("modelCalls", "equals", 1),
    metric("latencyP95Ms", "lt", 1e9),
    metric("models", "gt", 0),
    metric("notAKey", "gt", 0),
    metric("durationMs", "gt", 0),
    { ...metric("totalTokens", "gt", 0), body: { ...metric("totalTokens", "gt", 0).body, skipTotalCount: true } },
    filtered({ sort: { field: "costUsd", direction: "desc" } }),
    ...spanIds.map((id) => ({ method: "GET", path: `/telemetry/otel/spans/${id}` })),
  ];
}
/** Every derived span id of the support-bot traces (set by the first test). */
let spanIds: string[] = [];
async function answers(traceIds: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const e of endpoints(traceIds)) {
    const r = await callPaced(stack, e, { authorization: `Token ${f.keys.owner}` });
    out.push(`${e.method} ${e.path} ${JSON.stringify(e.body ?? null)} -> ${r.status} ${JSON.stringify(r.body)}`);
  }
  return out;
}

/** Back to the shape before migration 0021: every row's metrics in full, no delta column, no functions. */
async function toOldShape(sql: postgres.Sql) {
  await storeMetricsInFull(sql);
  await sql.unsafe(`
    alter table trace_analyses drop column metrics_delta, alter column metrics set not null;
    drop function trace_metrics_delta, trace_metrics_restore, trace_metrics_by_model, trace_metrics_base;`);
}

/** The migration as drizzle runs it: its statements in order. */
async function applyMigration(sql: postgres.Sql) {
  const text = readFileSync(join(MIGRATIONS_DIR, "0021_trace_metrics_delta.sql"), "utf8");
  for (const statement of text.split("--> statement-breakpoint")) await sql.unsafe(statement);
}

test("traces with metrics in full (the old shape) answer every read as the same traces stored as deltas", async () => {
  const { sql } = stack.database;
  // The maturation writes the seeded one-call traces' metrics as deltas itself (storedTraceMetrics).
  const [written] = await sql<{ delta: number; full: number }[]>`
    select count(*) filter (where metrics is null)::int as delta, count(*) filter (where metrics is not null)::int as full from trace_analyses`;
  expect(written.delta).toBeGreaterThan(2);
  // A row stored in full becomes a delta off its path (compactStoredMetrics), where one rebuilds it.
  await compactStoredMetrics(sql);
  const traces = await sql<{ trace_id: string; delta: boolean; bytes: number }[]>`
    select tr.trace_id, ta.metrics is null as delta, pg_column_size(coalesce(ta.metrics, ta.metrics_delta))::int as bytes
    from trace_analyses ta join traces tr on tr.id = ta.trace_pk join trace_services s on s.id = tr.trace_service_id
    where s.name = ${S} and s.tenant_id = (select tenant_id from traces where trace_id = 'tr-1')
    order by tr.trace_id`;
  expect(traces.length).toBeGreaterThan(2);
  // The seeded one-call traces are stored as deltas, a small fraction of the full object.
  expect(traces.filter((t) => t.delta).length).toBeGreaterThan(0);
  const ids = traces.map((t) => t.trace_id);
  const texts = async () =>
    (
      await sql<{ m: string }[]>`
      select ${sql.unsafe(TRACE_METRICS_SQL)}::text as m from trace_analyses ta join traces tr on tr.id = ta.trace_pk order by tr.trace_id`
    ).map((r) => r.m);
  const stored = await texts();
  const fresh = await answers(ids);
  expect(fresh.filter((a) => !/ -> 200 /.test(a))).toEqual([]);
  expect(fresh.filter((a) => a.includes('"metrics":{')).length).toBeGreaterThan(0);

  await toOldShape(sql);
  const [full] = await sql<{ n: number }[]>`select count(*)::int as n from trace_analyses where metrics is null`;
  expect(full.n).toBe(0);
  await applyMigration(sql);
  expect(await texts()).toEqual(stored);
  expect(await answers(ids)).toEqual(fresh);
});

test("the compaction (admin storage compact-metrics) moves metrics stored in full to deltas, online, and every answer stays", async () => {
  const { sql } = stack.database;
  const ids = (await sql<{ trace_id: string }[]>`select trace_id from traces order by trace_id`).map((r) => r.trace_id);
  const fresh = await answers(ids);
  await storeMetricsInFull(sql);
  // A row whose stored metrics a JavaScript number cannot carry exactly: the delta would not
  // rebuild them, so Postgres' check leaves it in full.
  const [odd] = await sql<{ trace_pk: string; metrics: string }[]>`
    select trace_pk, metrics::text as metrics from trace_analyses ta join traces tr on tr.id = ta.trace_pk
    where tr.trace_id = ${ids[0]}`;
  await sql`update trace_analyses set metrics = metrics || '{"durationMs": 0.10000000000000000555}'::jsonb where trace_pk = ${odd.trace_pk}`;
  // And one of another shape (two keys): as a delta it would list every base key it lacks, longer
  // than itself, so it stays as it is.
  const [small] = await sql<{ trace_pk: string; metrics: string }[]>`
    select trace_pk, metrics::text as metrics from trace_analyses ta join traces tr on tr.id = ta.trace_pk
    where tr.trace_id = ${ids[1]}`;
  await sql`update trace_analyses set metrics = '{"totalTokens": 5, "latencyMs": 1}' where trace_pk = ${small.trace_pk}`;
  const [before] = await sql<
    { full: number }[]
  >`select count(*)::int as full from trace_analyses where metrics is not null`;
  expect(before.full).toBeGreaterThan(3);
  const texts = async () =>
    (
      await sql<{ m: string }[]>`
      select ${sql.unsafe(TRACE_METRICS_SQL)}::text as m from trace_analyses ta join traces tr on tr.id = ta.trace_pk order by tr.trace_id`
    ).map((r) => r.m);
  const stored = await texts();
  expect(stored.some((m) => m.includes('"durationMs": 0.10000000000000000555'))).toBe(true);

  expect(await compactStoredMetrics(sql, { pages: 1 })).toBe(before.full - 2);
  const left = await sql<{ trace_pk: string }[]>`select trace_pk from trace_analyses where metrics is not null`;
  expect(left.map((r) => r.trace_pk).sort()).toEqual([odd.trace_pk, small.trace_pk].sort());
  expect(await texts()).toEqual(stored);
  // Their metrics as the analysis wrote them: compacted too, and every answer is what it was.
  for (const r of [odd, small])
    await sql`update trace_analyses set metrics = ${r.metrics}::text::jsonb where trace_pk = ${r.trace_pk}`;
  expect(await compactStoredMetrics(sql)).toBe(2);
  expect(await answers(ids)).toEqual(fresh);
  // A finished compaction finds nothing when run again.
  expect(await compactStoredMetrics(sql)).toBe(0);
});

test("rows written on every trace get time-ordered ids (0027): version 7, carrying the time written", async () => {
  const { sql } = stack.database;
  const rows = await sql<{ t: string; version: number }[]>`
    select 'sessions' as t, uuid_extract_version(id) as version from sessions
    union all select 'traces', uuid_extract_version(id) from traces
    union all select 'findings', uuid_extract_version(id) from findings`;
  expect(rows.filter((r) => r.t === "traces").length).toBeGreaterThan(2);
  expect(rows.filter((r) => r.version !== 7)).toEqual([]);
  // The id's time is the row's own creation time (to the clock's millisecond), not a random one.
  const traces = await sql<{ ok: boolean }[]>`
    select abs(extract(epoch from uuid_extract_timestamp(id) - ingested_at)) < 1 as ok from traces`;
  expect(traces.every((r) => r.ok)).toBe(true);
});

test("trace monitors' facts read each trace's token sum from its row (payloads left the row in 0015)", async () => {
  const { sql } = stack.database;
  const facts = await loadTraceFacts(sql, sql`true`, 1_000);
  const rows = await sql<{ id: string; total_tokens: string | null }[]>`select id, total_tokens from traces`;
  expect(facts.length).toBe(rows.length);
  const want = new Map(rows.map((r) => [r.id, Number(r.total_tokens ?? 0)]));
  expect([...want.values()].some((n) => n > 0)).toBe(true);
  expect(new Map(facts.map((f) => [f.entityPk, f.totalTokens]))).toEqual(want);
});

const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, 1, 1e-7, 0.1 + 0.2, 2 ** 53 + 2, 1100, 0.0002121, 256),
);
const value = fc.oneof(
  number,
  fc.constant(null),
  fc.boolean(),
  fc.string({ maxLength: 8 }),
  fc.array(number, { maxLength: 3 }),
);
const KEYS = ["durationMs", "modelCalls", "toolCalls", "promptTokens", "cachedTokens", "costUsd", "costComplete"];
/** Metrics the analysis writes today with some keys changed, dropped or added (hostile ones too). */
const metricsArb = fc.record({
  drop: fc.subarray([...KEYS, "costByModel", "models", "finishReasons"]),
  set: fc.dictionary(fc.constantFrom(...KEYS, "-", "costByModel", "errors", "x y", "models"), value, { maxKeys: 4 }),
  byModel: fc.option(fc.record({ costUsd: number, cachedTokens: number }), { nil: undefined }),
});

test("any metrics object reads back as written (property, through the writer and the compaction)", async () => {
  const { sql } = stack.database;
  const [t] = await sql<(TraceRow & { base: Record<string, any>; cost_usd: number | null })[]>`
    select tr.id, tr.tenant_id, tr.trace_service_id, tr.session_id, tr.trace_id, ta.cost_usd,
      ${sql.unsafe(TRACE_METRICS_SQL)} as base
    from traces tr join trace_analyses ta on ta.trace_pk = tr.id order by tr.trace_id limit 1`;
  const { base } = t;
  class Rollback extends Error {}
  const shapes = { delta: 0, full: 0 };
  await fc.assert(
    fc.asyncProperty(metricsArb, fc.option(number, { nil: null }), async ({ drop, set, byModel }, cost) => {
      const metrics: Record<string, unknown> = { ...base, ...set };
      for (const k of drop) delete metrics[k];
      if (byModel && Array.isArray(base.costByModel)) metrics.costByModel = [{ ...base.costByModel[0], ...byModel }];
      const expected = JSON.parse(JSON.stringify(metrics));
      let read: unknown;
      await sql
        .begin(async (tx) => {
          await tx`delete from trace_analyses where trace_pk = ${t.id}`;
          await persistTraceAnalyses(tx, [{ row: t as TraceRow, analysis: { metrics, costUsd: cost } }]);
          await compactStoredMetrics(tx);
          const [r] = await tx`
            select ${tx.unsafe(TRACE_METRICS_SQL)} as m, ${tx.json(metrics as any)}::jsonb as want, ta.metrics is null as delta
            from traces tr join trace_analyses ta on ta.trace_pk = tr.id where tr.id = ${t.id}`;
          read = r.m;
          shapes[r.delta ? "delta" : "full"]++;
          // The same value as the jsonb of the object itself (what the full shape stored and answered).
          expect(JSON.stringify(r.m)).toBe(JSON.stringify(r.want));
          throw new Rollback();
        })
        .catch((e) => {
          if (!(e instanceof Rollback)) throw e;
        });
      expect(read).toEqual(expected);
    }),
    { numRuns: 150, examples: [[{ drop: [], set: {}, byModel: undefined }, t.cost_usd]] },
  );
  // Both shapes were written: deltas where the base rebuilds the object, the full object elsewhere.
  expect(shapes.delta).toBeGreaterThan(0);
  expect(shapes.full).toBeGreaterThan(0);
});

/** A trace row as the base reads it: times to the microsecond, token sums or null, a model or none. */
const traceRowArb = fc.record({
  startUs: fc.integer({ min: 1_577_836_800_000_000, max: 1_893_456_000_000_000 }),
  durationUs: fc.oneof(
    fc.integer({ min: 0, max: 3_600_000_000 }),
    fc.integer({ min: 0, max: 3_600_000 }).map((ms) => ms * 1000),
  ),
  tokens: fc.array(fc.option(fc.oneof(fc.nat(5_000), fc.integer({ min: 0, max: 2 ** 40 })), { nil: null }), {
    minLength: 3,
    maxLength: 3,
  }),
  model: fc.option(fc.constantFrom("gpt-4o", "claude-sonnet-4-5", "x y", "ünïcode"), { nil: null }),
});
const isoOfMicros = (us: number) =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 23)}${String(us % 1000).padStart(3, "0")}Z`;

/** Over `traces tr join trace_analyses ta`: the base keys whose value read alone differs from the object's. */
const keyChecks = `array_remove(array[${[...TRACE_METRICS_BASE_KEYS]
  .map(
    (k) => `case when ${traceMetricBaseValueSql(k)} is distinct from (${TRACE_METRICS_SQL} -> '${k}') then '${k}' end`,
  )
  .join(", ")}], null)`;

test("the writer's delta (storedTraceMetrics) rebuilds any metrics object of any trace row exactly (property against Postgres)", async () => {
  const { sql } = stack.database;
  const [t] = await sql<{ id: string }[]>`select id from traces order by trace_id limit 1`;
  class Rollback extends Error {}
  const shapes = { delta: 0, full: 0, empty: 0 };
  await fc.assert(
    fc.asyncProperty(
      traceRowArb,
      metricsArb,
      fc.option(number, { nil: null }),
      fc.constantFrom("exact", "ms", "other"),
      async (row, { drop, set, byModel }, cost, durationKind) => {
        let read: unknown;
        let want: unknown;
        await sql
          .begin(async (tx) => {
            const [pt, ct, tt] = row.tokens;
            await tx`update traces set start_time = ${isoOfMicros(row.startUs)}::timestamptz,
              end_time = ${isoOfMicros(row.startUs + row.durationUs)}::timestamptz, model = ${row.model},
              prompt_tokens = ${pt}, completion_tokens = ${ct}, total_tokens = ${tt} where id = ${t.id}`;
            const [fields] = await tx<
              (TraceMetricsBaseFields & { tenant_id: string; trace_service_id: string; trace_id: string })[]
            >`
              select tr.tenant_id, tr.trace_service_id, tr.trace_id, ${tx.unsafe(traceMetricsBaseFieldsSql("tr"))} from traces tr where tr.id = ${t.id}`;
            // What the analysis writes for a one-call trace (the base's keys), then changed.
            const model = row.model ?? "unknown";
            const duration =
              durationKind === "exact"
                ? Number(fields.base_duration_ms)
                : durationKind === "ms"
                  ? Math.floor(row.durationUs / 1000)
                  : 7.25;
            const top: Record<string, unknown> = {
              durationMs: duration,
              modelCalls: 1,
              toolCalls: 0,
              promptTokens: pt,
              completionTokens: ct,
              totalTokens: tt,
              cachedTokens: 0,
              reasoningTokens: 0,
              latencyP50Ms: duration,
              latencyP95Ms: duration,
              latencyMaxMs: duration,
              costUsd: cost,
              costComplete: cost !== null,
              pricedCostUsd: cost ?? 0,
              unpricedModels: cost === null ? [model] : [],
              finishReasons: { stop: 1 },
              models: [model],
              priceTableVersion: "2026-11-25",
            };
            const implied = {
              model,
              calls: 1,
              promptTokens: pt,
              cachedTokens: 0,
              completionTokens: ct,
              reasoningTokens: 0,
              totalTokens: tt,
              costUsd: cost,
              priced: cost !== null,
              note: null,
            };
            const metrics: Record<string, unknown> = { ...top, costByModel: [implied], ...set };
            for (const k of drop) delete metrics[k];
            if (byModel) metrics.costByModel = [{ ...implied, ...byModel }];
            const stored = storedTraceMetrics(metrics, cost, fields);
            shapes[stored.metrics ? "full" : stored.delta ? "delta" : "empty"]++;
            await tx`delete from trace_analyses where trace_pk = ${t.id}`;
            await tx`insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics, metrics_delta)
              values (${t.id}, ${fields.tenant_id}, ${fields.trace_service_id}, ${fields.trace_id}, now(), ${cost}::float8,
                ${stored.metrics ? tx.json(stored.metrics as any) : null}::jsonb, ${stored.delta ? tx.json(stored.delta as any) : null}::jsonb)`;
            const [r] = await tx`
              select ${tx.unsafe(TRACE_METRICS_SQL)} as m, ${tx.json(metrics as any)}::jsonb as want,
                ${tx.unsafe(keyChecks)} as keys_differ
              from traces tr join trace_analyses ta on ta.trace_pk = tr.id where tr.id = ${t.id}`;
            read = r.m;
            want = r.want;
            // Each base key read alone (a filter's path) answers what the whole object has.
            expect(r.keys_differ).toEqual([]);
            throw new Rollback();
          })
          .catch((e) => {
            if (!(e instanceof Rollback)) throw e;
          });
        // The same jsonb as the object itself (what the full shape stores and answers), key for key.
        expect(JSON.stringify(read)).toBe(JSON.stringify(want));
      },
    ),
    { numRuns: 400 },
  );
  // The analysis' own shape (nothing changed) is stored as a delta or nothing at all; hostile ones in full.
  expect(shapes.delta + shapes.empty).toBeGreaterThan(100);
  expect(shapes.full).toBeGreaterThan(0);
});

test("traces with span ids as rows (0017-0021) answer every span read as traces with them on the row, and the item index changed (0022)", async () => {
  const { sql } = stack.database;
  const traces = await sql<{ id: string; trace_id: string; keys: string[] | null }[]>`
    select tr.id, tr.trace_id, tr.span_keys::text[] as keys from traces tr join trace_services s on s.id = tr.trace_service_id
    where s.name = ${S} and s.tenant_id = (select tenant_id from traces where trace_id = 'tr-1') order by tr.trace_id`;
  expect(traces.every((t) => (t.keys?.length ?? 0) >= 2)).toBe(true);
  const [{ rows }] = await sql<{ rows: number }[]>`select count(*)::int as rows from span_ids`;
  expect(rows).toBe(0);
  // Every span id of these traces, spelled as the reads spell it (16 hex characters).
  spanIds = traces.flatMap((t) => t.keys!.map((k) => BigInt.asUintN(64, BigInt(k)).toString(16).padStart(16, "0")));
  spanIds.push("0000000000000000", "not-a-span-id");
  const ids = traces.map((t) => t.trace_id);
  const fresh = await answers(ids);
  // Each real id finds its span.
  for (const id of spanIds.slice(0, -2))
    expect(fresh.find((a) => a.startsWith(`GET /telemetry/otel/spans/${id} `))).toContain(`"spanId":"${id}"`);

  // Half of them as the writer between 0017 and 0021 stored them, then all, then the migration again.
  expect(
    await storeSpanIdRows(
      sql,
      traces.filter((_, i) => i % 2 === 0).map((t) => t.id),
    ),
  ).toBeGreaterThan(0);
  expect(await answers(ids)).toEqual(fresh);
  await storeSpanIdRows(
    sql,
    traces.map((t) => t.id),
  );
  await sql`update traces set span_keys = null`;
  // Before 0022 transcript items had the unique btree that 0024 puts back: 0022, then 0024, again.
  await sql.unsafe(`drop index traces_span_keys_idx; alter table traces drop column span_keys`);
  for (const file of ["0022_trace_span_keys.sql", "0024_transcript_item_unique_again.sql"]) {
    const text = readFileSync(join(MIGRATIONS_DIR, file), "utf8");
    for (const statement of text.split("--> statement-breakpoint")) await sql.unsafe(statement);
  }
  expect(await answers(ids)).toEqual(fresh);
});

/** A transcript item with a chosen id (a small pool, so ids repeat) and content. */
const itemArb = fc.record({
  id: fc.constantFrom("itm_a", "itm_b", "itm_c", "itm_d"),
  content: fc.constantFrom("x", "y"),
});

test("one row per item id in a session across two maturations (property)", async () => {
  const { sql } = stack.database;
  const [s] = await sql<SessionRow[]>`select id, tenant_id from sessions where session_id = 'conv-1' limit 1`;
  const items = (list: Array<{ id: string; content: string }>): TranscriptItem[] =>
    list.map((x, i) => ({
      id: x.id,
      type: "user",
      role: "user",
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      traceId: null,
      spanId: null,
      content: x.content,
    }));
  class Rollback extends Error {}
  /** Both maturations' rows. */
  const stored = async (first: TranscriptItem[], second: TranscriptItem[]) => {
    let rows: Array<{ position: number; item_id: string }> = [];
    await sql
      .begin(async (tx) => {
        await tx`delete from transcript_items where session_pk = ${s.id}`;
        await tx`delete from transcript_runs where session_pk = ${s.id}`;
        await persistTranscriptItems(tx, s, first, false);
        await persistTranscriptItems(tx, s, second, true);
        rows = (await itemRows(tx, [s.id])).map((r) => ({ position: r.position, item_id: r.item_id }));
        throw new Rollback();
      })
      .catch((e) => {
        if (!(e instanceof Rollback)) throw e;
      });
    return rows;
  };
  await fc.assert(
    fc.asyncProperty(fc.array(itemArb, { maxLength: 6 }), fc.array(itemArb, { maxLength: 6 }), async (a, b) => {
      // One item per id (the unique index of migration 0024; the writer's rule for runs, 0040), the first position of each kept.
      const ids = (await stored(items(a), items(b))).map((r) => r.item_id);
      expect(ids.length).toBe(new Set(ids).size);
    }),
    { numRuns: 60 },
  );
});
