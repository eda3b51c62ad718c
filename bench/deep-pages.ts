/**
 * `bun run bench/deep-pages.ts`: deep page latency by offset vs by cursor (keyset), over real HTTP
 * against apps/platform/src/main.ts in a child process and an embedded Postgres seeded with SQL:
 * N sessions of one service (default 500,000, with analysis rollups) and one session with M spans
 * (default 300,000). Floor: the first page (offset 0) of the same read in the same run.
 *
 * Then searches on analysis fields (filter + total, sort): p50/p99 of `--samples` requests each
 * beside the same run's floor (the plain newest-first first page).
 *
 *   bun run bench/deep-pages.ts [--sessions 500000] [--spans 300000] [--repeat 5] [--samples 40]
 *     [--platform-root DIR]   run another checkout's platform and migrations (a `git archive` of
 *                             main, node_modules linked): the before/after on the same machine
 */
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runMigrations } from "@cellar/shared/db/client";
import { runBench } from "./lib/harness";
import { seedService } from "./lib/seed";

const { values: args } = parseArgs({
  options: {
    sessions: { type: "string", default: "500000" },
    spans: { type: "string", default: "300000" },
    repeat: { type: "string", default: "5" },
    samples: { type: "string", default: "40" },
    "platform-root": { type: "string" },
  },
});
const SESSIONS = Number(args.sessions);
const SPANS = Number(args.spans);
const REPEAT = Number(args.repeat);
const SAMPLES = Number(args.samples);
const ROOT = resolve(args["platform-root"] ?? resolve(import.meta.dir, ".."));

// Migrated here: `--platform-root` runs another checkout's migrations and platform.
await runBench("deep", { nats: true, migrate: false }, async (bench) => {
  const { database, databaseUrl: url } = bench;
  if (args["platform-root"]) {
    const { migrate } = await import("drizzle-orm/postgres-js/migrator");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    await migrate(drizzle(database.sql), { migrationsFolder: join(ROOT, "shared/db/migrations") });
  } else await runMigrations(url);
  const sql = database.sql;
  const tenant = await bench.tenant({ plan: "pro" });
  const svc = await seedService(database.db, tenant.tenantId, "deep-bot");
  const T = tenant.tenantId;
  const S = svc.id;
  const t0 = performance.now();
  await sql`
    insert into sessions (tenant_id, trace_service_id, session_id, environment, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
    select ${T}, ${S}, 'sess-' || g, 'prod', 'matured', now() - g * interval '5 seconds', now() - g * interval '5 seconds', now(), 1, now(), 1
    from generate_series(1, ${SESSIONS}) g`;
  // After migration 0009 the latency metrics also have typed columns (what the maturation writes).
  const [typed] =
    await sql`select 1 from information_schema.columns where table_name = 'session_analyses' and column_name = 'latency_p95_ms'`;
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, cost_usd, turns, metrics
      ${typed ? sql`, latency_p95_ms` : sql``})
    select s.id, s.tenant_id, s.trace_service_id, s.session_id, 1, now(), now(), 1, 10, (hashtext(s.session_id) & 65535) / 1e6, hashtext(s.session_id || 't') & 63,
      jsonb_build_object('latencyP95Ms', hashtext(s.session_id || 'l') & 8191, 'turns', hashtext(s.session_id || 't') & 63)
      ${typed ? sql`, hashtext(s.session_id || 'l') & 8191` : sql``}
    from sessions s where s.trace_service_id = ${S}`;
  const [long] = await sql<
    { id: string }[]
  >`select id from sessions where trace_service_id = ${S} and session_id = 'sess-1'`;
  await sql`
    insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, model, start_time, end_time, payload, received_at, status, maturation_count)
    values (${T}, ${S}, ${long.id}, 'trace-long', 'sess-1', 'openai', 'gpt-4o-mini', now() - interval '1 day', now(), '{}'::jsonb, now(), 'matured', 1)`;
  await sql`
    insert into spans (tenant_id, trace_service_id, session_pk, trace_pk, span_id, trace_id, session_id, name, kind, start_time, end_time, attributes)
    select ${T}, ${S}, ${long.id}, tr.id, lpad(to_hex(g), 16, '0'), 'trace-long', 'sess-1', 'tool.call', 'tool', now() - interval '1 day' + g * interval '10 ms',
      now() - interval '1 day' + g * interval '10 ms' + interval '5 ms', '{"gen_ai.tool.name": "search"}'::jsonb
    from generate_series(1, ${SPANS}) g, traces tr where tr.trace_service_id = ${S} and tr.trace_id = 'trace-long'`;
  await sql`vacuum analyze`;
  console.log(
    `seeded ${SESSIONS} sessions and ${SPANS} spans in one session in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const { port } = await bench.spawnApp("platform", {
    cwd: ROOT,
    env: { LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const base = `http://127.0.0.1:${port}/api/v1`;
  const headers = { authorization: `Token ${tenant.platformKey}`, "content-type": "application/json" };

  // Paced under the per-key limit (50/s) so no request meets a 429.
  let last = 0;
  async function req(path: string, body?: unknown): Promise<{ ms: number; status: number; json: any }> {
    const wait = last + 25 - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    last = performance.now();
    const start = performance.now();
    const res = await fetch(
      base + path,
      body === undefined ? { headers } : { method: "POST", headers, body: JSON.stringify(body) },
    );
    const json = await res.json();
    return { ms: performance.now() - start, status: res.status, json };
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  async function timed(path: string, body?: unknown) {
    const ms: number[] = [];
    let status = 0;
    for (let i = 0; i < REPEAT; i++) {
      const r = await req(path, body);
      ms.push(r.ms);
      status = r.status;
    }
    return { ms: +median(ms).toFixed(1), status };
  }

  const rows: string[] = [];
  const F = "/telemetry/otel/sessions/filtered";
  const LIMIT = 50;
  for (const [name, extra] of [
    ["sessions/filtered, newest first, skipTotalCount", { skipTotalCount: true }],
    [
      "sessions/filtered, sort costUsd desc (joined), skipTotalCount",
      { skipTotalCount: true, sort: { field: "costUsd", direction: "desc" } },
    ],
  ] as const) {
    const body = { serviceName: "deep-bot", limit: LIMIT, ...extra };
    const floor = await timed(F, body);
    for (const depth of [10_000, 50_000, 100_000]) {
      const byOffset = await timed(F, { ...body, offset: depth });
      // The cursor at `depth`: nextCursor of the page just before it (offset pages return one too).
      const before = await req(F, { ...body, offset: depth - LIMIT });
      const cursor = before.json.pagination?.nextCursor;
      const byCursor = cursor ? await timed(F, { ...body, cursor }) : { ms: NaN, status: before.status };
      rows.push(
        `| ${name} | ${depth.toLocaleString("en")} | ${floor.ms} | ${byOffset.ms} (${byOffset.status}) | ${byCursor.ms} (${byCursor.status}) | ${(byOffset.ms / floor.ms).toFixed(1)}x | ${(byCursor.ms / floor.ms).toFixed(1)}x |`,
      );
      console.log(rows[rows.length - 1]);
    }
  }

  // Spans of one session: offsets stop at 100,000 (400), the cursor goes on to the end.
  const SP = "/telemetry/otel/sessions/deep-bot/sess-1/spans";
  const floor = await timed(`${SP}?limit=500`);
  let cursor: string | null = null;
  let depth = 0;
  const marks = new Set([10_000, 50_000, 100_000, 200_000, Math.floor((SPANS - 500) / 1000) * 1000]);
  while (depth < SPANS - 500) {
    const r = await req(`${SP}?limit=1000${cursor ? `&cursor=${cursor}` : ""}`);
    if (r.status !== 200) throw new Error(`walk at ${depth}: ${r.status} ${JSON.stringify(r.json)}`);
    cursor = r.json.pagination.nextCursor;
    depth += 1000;
    if (!marks.has(depth) || !cursor) continue;
    const byOffset = await timed(`${SP}?limit=500&offset=${depth}`);
    const byCursor = await timed(`${SP}?limit=500&cursor=${cursor}`);
    rows.push(
      `| session spans, limit 500 | ${depth.toLocaleString("en")} | ${floor.ms} | ${byOffset.status === 200 ? byOffset.ms : "-"} (${byOffset.status}) | ${byCursor.ms} (${byCursor.status}) | ${byOffset.status === 200 ? (byOffset.ms / floor.ms).toFixed(1) + "x" : "-"} | ${(byCursor.ms / floor.ms).toFixed(1)}x |`,
    );
    console.log(rows[rows.length - 1]);
  }

  // Searches on analysis fields: p50/p99 beside the floor (plain newest-first first page), same run.
  const pct = (xs: number[], p: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
  async function sampled(body: unknown) {
    const ms: number[] = [];
    let status = 0;
    let total: number | null = null;
    for (let i = 0; i < SAMPLES; i++) {
      const r = await req(F, body);
      ms.push(r.ms);
      status = r.status;
      total = r.json.pagination?.total ?? null;
    }
    return { p50: +pct(ms, 50).toFixed(1), p99: +pct(ms, 99).toFixed(1), status, total };
  }
  const svcBody = { serviceName: "deep-bot", limit: LIMIT };
  const analysisFloor = await sampled({ ...svcBody, skipTotalCount: true });
  const analysisRows: string[] = [];
  for (const [name, body] of [
    [
      "filter costUsd > 0.03 (54%), sort costUsd desc, with total",
      {
        ...svcBody,
        filters: [{ field: "costUsd", operator: "gt", value: 0.03 }],
        sort: { field: "costUsd", direction: "desc" },
      },
    ],
    [
      "filter costUsd > 0.06 (8%), with total",
      { ...svcBody, filters: [{ field: "costUsd", operator: "gt", value: 0.06 }] },
    ],
    [
      "filter metrics.latencyP95Ms > 4000 (51%), with total",
      { ...svcBody, filters: [{ field: "metrics.latencyP95Ms", operator: "gt", value: 4000 }] },
    ],
    [
      "filter metrics.latencyP95Ms > 8000 (2%), with total",
      { ...svcBody, filters: [{ field: "metrics.latencyP95Ms", operator: "gt", value: 8000 }] },
    ],
    [
      "filter metrics.turns > 60 (jsonb key, no column), with total",
      { ...svcBody, filters: [{ field: "metrics.turns", operator: "gt", value: 60 }] },
    ],
    [
      "sort costUsd desc, skipTotalCount",
      { ...svcBody, skipTotalCount: true, sort: { field: "costUsd", direction: "desc" } },
    ],
    [
      "sort turns asc, skipTotalCount",
      { ...svcBody, skipTotalCount: true, sort: { field: "turns", direction: "asc" } },
    ],
  ] as const) {
    const r = await sampled(body);
    analysisRows.push(
      `| ${name} | ${r.total ?? "-"} | ${analysisFloor.p50} / ${analysisFloor.p99} | ${r.p50} / ${r.p99} (${r.status}) | ${(r.p50 / analysisFloor.p50).toFixed(1)}x / ${(r.p99 / analysisFloor.p99).toFixed(1)}x |`,
    );
    console.log(analysisRows[analysisRows.length - 1]);
  }

  console.log(
    `\n${SESSIONS.toLocaleString("en")} sessions, ${SPANS.toLocaleString("en")} spans in one session; median of ${REPEAT}; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log(
    "| read | depth | floor: first page ms | by offset ms (status) | by cursor ms (status) | offset / floor | cursor / floor |\n|---|---|---|---|---|---|---|",
  );
  for (const r of rows) console.log(r);
  console.log(
    `\nanalysis fields, ${SAMPLES} requests each; floor = newest-first first page (skipTotalCount), same run`,
  );
  console.log(
    "| read | total | floor p50 / p99 ms | p50 / p99 ms (status) | ratio to floor p50 / p99 |\n|---|---|---|---|---|",
  );
  for (const r of analysisRows) console.log(r);
});
