/**
 * `npm run bench:reads`: latency of the platform read API over real HTTP on loopback against an
 * embedded Postgres seeded here (the server is apps/platform/src/main.ts in a child process) with SQL (generate_series): one 1,000-item transcript, 100,000
 * matured sessions with analysis rollups, 2,000 traces with spans. Reports p50/p99 per read.
 *
 *   bun run bench/reads.ts [--requests 1000] [--concurrency 16] [--sessions 100000] [--only <read name part>]
 */
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { runBench } from "./lib/harness";
import { seedMaturedSessions, seedService } from "./lib/seed";

const { values: args } = parseArgs({
  options: {
    requests: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "16" },
    sessions: { type: "string", default: "100000" },
    only: { type: "string", default: "" },
  },
});
const REQUESTS = Number(args.requests);
const CONCURRENCY = Number(args.concurrency);
const SESSIONS = Number(args.sessions);
const TRACES = 2_000;

// Reads never touch NATS, but the platform main connects to it (webhook test sends).
await runBench("reads", { nats: true, poolMax: 10 }, async (bench) => {
  const { database, scratch } = bench;
  const sql = database.sql;
  const tenant = await bench.tenant({ plan: "pro" });
  const svc = await seedService(database.db, tenant.tenantId, "bench-bot");
  const T = tenant.tenantId;
  const S = svc.id;

  let t0 = performance.now();
  // 100,000 matured sessions over 30 days; 10% labelled vip; rollups vary so filters select subsets.
  await seedMaturedSessions(sql, { tenantId: T, serviceId: S, count: SESSIONS, vip: true, metrics: true });
  await sql`vacuum analyze`;
  const seedSessions = performance.now() - t0;

  // One session with 1,000 transcript items; every fourth a 3 KB tool result (lean reads preview it).
  t0 = performance.now();
  const [long] = await sql<{ id: string }[]>`
    insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
    values (${T}, ${S}, 'long-1', 'matured', now() - interval '2 hours', now() - interval '1 hour', now() - interval '1 hour', 1, now(), 1) returning id`;
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, metrics)
    values (${long.id}, ${T}, ${S}, 'long-1', 1, now(), now(), 1, 1000, '{}'::jsonb)`;
  await sql`
    insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item)
    select ${long.id}, g, ${T}, 'itm_' || lpad(g::text, 16, '0'), k.kind, k.role, now() - interval '2 hours' + g * interval '3 seconds', 'trace-' || (g / 4), null,
      jsonb_build_object('id', 'itm_' || lpad(g::text, 16, '0'), 'type', k.kind, 'role', k.role, 'timestamp', to_char(now() - interval '2 hours' + g * interval '3 seconds', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'traceId', 'trace-' || (g / 4), 'spanId', null, 'content', case when k.kind = 'tool_result' then repeat('{"row": "result data"} ', 130) else repeat('Customer message about an order, ', 10) end,
        'spanAttributes', jsonb_build_object('gen_ai.request.model', 'gpt-4o-mini', 'gen_ai.usage.total_tokens', 900))
    from generate_series(0, 999) g
    cross join lateral (select (array['user', 'assistant', 'tool_call', 'tool_result'])[g % 4 + 1] as kind,
      (array['user', 'assistant', 'assistant', 'tool'])[g % 4 + 1] as role) k`;
  const seedTranscript = performance.now() - t0;

  // 2,000 traces (3 KB payloads) in 200 sessions, 2 spans each, all matured with metrics.
  t0 = performance.now();
  const payload = {
    provider: "openai",
    service_name: "bench-bot",
    environment: "prod",
    request: {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are helpful. ".repeat(60) },
        { role: "user", content: "Where is my order A-1042?" },
      ],
    },
    responses: [
      {
        id: "chatcmpl-1",
        object: "chat.completion",
        model: "gpt-4o-mini-2024-07-18",
        choices: [
          { index: 0, message: { role: "assistant", content: "It shipped. ".repeat(80) }, finish_reason: "stop" },
        ],
        usage: { prompt_tokens: 700, completion_tokens: 300, total_tokens: 1000 },
      },
    ],
  };
  await sql`
    insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time, payload, received_at, status, maturation_count, matured_at)
    select ${T}, ${S}, s.id, 'trace-' || g, s.session_id, 'prod', 'openai', 'gpt-4o-mini', now() - interval '1 day' + g * interval '1 second',
      now() - interval '1 day' + g * interval '1 second' + interval '900 ms', ${sql.json(payload as never)}::jsonb, now(), 'matured', 1, now()
    from generate_series(1, ${TRACES}) g join sessions s on s.trace_service_id = ${S} and s.session_id = 'sess-' || (g % 200 + 1)`;
  await sql`
    insert into spans (tenant_id, trace_service_id, session_pk, trace_pk, span_id, parent_span_id, trace_id, session_id, name, kind, start_time, end_time, attributes)
    select tr.tenant_id, tr.trace_service_id, tr.session_pk, tr.id, substr(md5(tr.trace_id || k), 1, 16), case when k = 1 then substr(md5(tr.trace_id || 0), 1, 16) end,
      tr.trace_id, tr.session_id, case when k = 0 then 'openai.call' else 'chat.completion' end, case when k = 0 then 'trace' else 'llm' end, tr.start_time, tr.end_time,
      jsonb_build_object('gen_ai.request.model', 'gpt-4o-mini', 'gen_ai.usage.total_tokens', 1000)
    from traces tr cross join generate_series(0, 1) k where tr.trace_service_id = ${S}`;
  await sql`
    insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics)
    select id, tenant_id, trace_service_id, trace_id, now(), 0.0003, '{"modelCalls": 1, "totalTokens": 1000}'::jsonb from traces where trace_service_id = ${S}`;
  await sql`vacuum analyze`;
  const seedTraces = performance.now() - t0;

  // The real apps/platform/src/main.ts in its own process, so the load generator here does not
  // share its event loop.
  const { child, port } = await bench.spawnApp("platform", {
    env: { LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const base = `http://127.0.0.1:${port}/api/v1`;
  // The platform limits each key (50 requests/s, PLATFORM_LIMITS): the load is spread over enough
  // keys of the same owner that no read here is ever answered 429.
  const keys = [tenant.platformKey];
  for (let i = 0; i < 99; i++)
    keys.push((await createApiKey(database.db, { kind: "platform", userId: tenant.ownerId })).key);
  let turn = 0;
  const headersOf = () => ({
    authorization: `Token ${keys[turn++ % keys.length]}`,
    "content-type": "application/json",
  });

  // CPU time the server and Postgres spent, from /proc: unlike latency it does not grow when
  // other work competes for the two cores, so it shows the cost of a read on a busy machine.
  const postmaster = Number(readFileSync(join(scratch, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
  const cpuMs = () => {
    let app = 0;
    let db = 0;
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      } catch {
        continue;
      }
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (100 Hz)
      if (Number(entry) === child.pid) app += ms;
      else if (Number(entry) === postmaster || Number(f[1]) === postmaster) db += ms;
    }
    return { app, db };
  };

  async function once(req: () => { path: string; body?: unknown }): Promise<number> {
    const r = req();
    const start = performance.now();
    const res = await fetch(
      r.path.startsWith("http") ? r.path : base + r.path,
      r.body === undefined
        ? { headers: headersOf() }
        : { method: "POST", headers: headersOf(), body: JSON.stringify(r.body) },
    );
    await res.arrayBuffer();
    const ms = performance.now() - start;
    if (res.status !== 200) throw new Error(`${r.path} -> ${res.status}`);
    return ms;
  }
  /** `n` requests over `concurrency` workers; latencies in ms and throughput. */
  async function run(name: string, n: number, concurrency: number, req: () => { path: string; body?: unknown }) {
    if (args.only && !name.includes(args.only)) return;
    for (let i = 0; i < Math.min(20, n); i++) await once(req); // warm caches and the key cache
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    const cpu0 = cpuMs();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) latencies.push(await once(req));
      }),
    );
    const wall = (performance.now() - started) / 1000;
    const cpu1 = cpuMs();
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
    const row = {
      read: name,
      requests: n,
      concurrency,
      p50: +pct(50).toFixed(1),
      p99: +pct(99).toFixed(1),
      max: +latencies[latencies.length - 1].toFixed(1),
      rps: Math.round(n / wall),
      appCpuMs: +((cpu1.app - cpu0.app) / n).toFixed(2),
      dbCpuMs: +((cpu1.db - cpu0.db) / n).toFixed(2),
    };
    results.push(row);
    console.log(JSON.stringify(row));
  }
  const results: Array<Record<string, unknown>> = [];
  const rnd = (n: number) => Math.floor(Math.random() * n);
  const TR = "/telemetry/otel/sessions/bench-bot/long-1/transcript";

  console.log(
    `seeded ${SESSIONS} sessions in ${(seedSessions / 1000).toFixed(1)} s, transcript in ${(seedTranscript / 1000).toFixed(1)} s, ${TRACES} traces in ${(seedTraces / 1000).toFixed(1)} s`,
  );
  // The floor, in the same run: the platform's /health over the same HTTP client (no key, no
  // database), at each concurrency the reads use. A read's figure is read beside it (x floor).
  const health = `http://127.0.0.1:${port}/health`;
  for (const c of [1, 8, CONCURRENCY]) await run(`floor: GET /health`, REQUESTS, c, () => ({ path: health }));

  await run("transcript lean limit=100 (random offset)", REQUESTS, 1, () => ({
    path: `${TR}?limit=100&offset=${rnd(10) * 100}`,
  }));
  await run("transcript lean limit=100 (random offset)", REQUESTS, 8, () => ({
    path: `${TR}?limit=100&offset=${rnd(10) * 100}`,
  }));
  await run("transcript full limit=500", Math.ceil(REQUESTS / 4), 1, () => ({
    path: `${TR}?limit=500&content=full&offset=${rnd(2) * 500}`,
  }));

  const F = "/telemetry/otel/sessions/filtered";
  const since = () => new Date(Date.now() - 86_400_000).toISOString();
  const filtered: Array<[string, () => unknown]> = [
    ["no filter, newest first, with total", () => ({ serviceName: "bench-bot" })],
    [
      "no filter, skipTotalCount, offset 5000",
      () => ({ serviceName: "bench-bot", skipTotalCount: true, offset: 5000 }),
    ],
    [
      "sessionId equals",
      () => ({
        serviceName: "bench-bot",
        filters: [{ field: "sessionId", operator: "equals", value: `sess-${1 + rnd(SESSIONS)}` }],
      }),
    ],
    [
      "last 24 h, with total",
      () => ({ serviceName: "bench-bot", filters: [{ field: "lastActivityAt", operator: "gte", value: since() }] }),
    ],
    [
      "costUsd > 0.03 sorted by cost, with total",
      () => ({
        serviceName: "bench-bot",
        filters: [{ field: "costUsd", operator: "gt", value: 0.03 }],
        sort: { field: "costUsd", direction: "desc" },
      }),
    ],
    [
      "label vip and errors >= 1, with total",
      () => ({
        serviceName: "bench-bot",
        filters: [
          { field: "label", operator: "equals", value: "vip" },
          { field: "errors", operator: "gte", value: 1 },
        ],
      }),
    ],
    [
      "metrics.latencyP95Ms > 4000, skipTotalCount",
      () => ({
        serviceName: "bench-bot",
        filters: [{ field: "metrics.latencyP95Ms", operator: "gt", value: 4000 }],
        skipTotalCount: true,
      }),
    ],
  ];
  for (const [name, body] of filtered)
    await run(`sessions/filtered: ${name}`, Math.ceil(REQUESTS / 5), 1, () => ({ path: F, body: body() }));

  const traceReads = [
    () => ({ path: `/telemetry/otel/trace/trace-${1 + rnd(TRACES)}?serviceName=bench-bot` }),
    () => ({ path: `/telemetry/otel/spans/bench-bot/trace-${1 + rnd(TRACES)}` }),
    () => ({ path: `/telemetry/metrics/trace/trace-${1 + rnd(TRACES)}` }),
  ];
  await run("trace reads mixed (trace, spans, metrics)", REQUESTS * 3, 1, () => traceReads[rnd(3)]());
  await run("trace reads mixed (trace, spans, metrics)", REQUESTS * 3, CONCURRENCY, () => traceReads[rnd(3)]());

  console.log(
    `\nload average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log(
    "| read | concurrency | requests | p50 ms | p99 ms | max ms | req/s | app CPU ms/req | Postgres CPU ms/req | p50 x floor |\n|---|---|---|---|---|---|---|---|---|---|",
  );
  const floorAt = (c: unknown) => results.find((r) => r.read === "floor: GET /health" && r.concurrency === c);
  for (const r of results) {
    const floor = floorAt(r.concurrency);
    const ratio = floor ? (Number(r.p50) / Math.max(0.1, Number(floor.p50))).toFixed(1) : "";
    console.log(
      `| ${r.read} | ${r.concurrency} | ${r.requests} | ${r.p50} | ${r.p99} | ${r.max} | ${r.rps} | ${r.appCpuMs} | ${r.dbCpuMs} | ${ratio} |`,
    );
  }
});
