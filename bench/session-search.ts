/**
 * `bun run bench/session-search.ts --data-dir <cluster seeded by bench/seed.ts>`: the metric-filter
 * session searches (sessions/filtered with a filter, a sort and the total) through the platform
 * (apps/platform/src/main.ts in a child process) on a seeded cluster, one request in flight,
 * beside a floor measured in the same run: a bare `select 1` on a pool of the bench's own,
 * timed right after each request. Reads named `traces...` are traces/filtered searches (the trace
 * list on a metrics key, docs/performance.md "reads at 3 million").
 *
 *   bun run bench/session-search.ts --data-dir /path/m3 [--requests 200] [--reads cost,latency]
 *     [--platform-root DIR]  run another checkout's platform (a `git archive` of main with
 *                            node_modules linked): the before of a before/after on the same data
 *     [--no-migrate]         leave the cluster's migrations as they are (a before run)
 *
 * The cluster's keys come from `<data-dir>.keys.json` (bench/seed.ts). Reads are paced under the
 * platform's per-key limit (50/s); the pause is outside the timed request.
 */
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { readSeedKeys } from "./e2e/cluster";
import { ROOT, runBench } from "./lib/harness";
import { cpuByProcess, cpuDelta, pct, postmasterPid } from "./lib/proc";

const { values: args } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    requests: { type: "string", default: "200" },
    reads: { type: "string" },
    "platform-root": { type: "string" },
    "no-migrate": { type: "boolean", default: false },
  },
});
if (!args["data-dir"]) throw new Error("--data-dir <cluster seeded by bench/seed.ts> is required");
const DATA_DIR = resolve(args["data-dir"]);
const N = Number(args.requests);
const keys = readSeedKeys(DATA_DIR);

type Body = Record<string, unknown>;
/** The search a read posts to: sessions/filtered unless named. */
type Search = "sessions" | "traces";
const f = (field: string, operator: string, value: unknown) => ({ field, operator, value });
/** The seed's distributions (bench/seed.ts): cost 0-0.04, latencyP95Ms 0-5000, tokens 3,000-43,000. */
const READS: Record<string, [string, Body, Search?]> = {
  cost: [
    "costUsd > 0.03 sorted by cost desc, with total",
    { filters: [f("costUsd", "gt", 0.03)], sort: { field: "costUsd", direction: "desc" } },
  ],
  costWide: [
    "costUsd > 0.025 sorted by cost desc, with total",
    { filters: [f("costUsd", "gt", 0.025)], sort: { field: "costUsd", direction: "desc" } },
  ],
  latency: ["metrics.latencyP95Ms > 4000, with total", { filters: [f("metrics.latencyP95Ms", "gt", 4000)] }],
  tokens: [
    "totalTokens >= 33000 sorted by tokens desc, with total",
    { filters: [f("totalTokens", "gte", 33000)], sort: { field: "totalTokens", direction: "desc" } },
  ],
  duration: ["durationMs > 125000, with total", { filters: [f("durationMs", "gt", 125000)] }],
  toolCalls: ["toolCalls >= 5, with total", { filters: [f("toolCalls", "gte", 5)] }],
  errors: [
    "errors > 0 sorted by cost desc, with total",
    { filters: [f("errors", "gt", 0)], sort: { field: "costUsd" } },
  ],
  problems: ["problems >= 1, with total", { filters: [f("problems", "gte", 1)] }],
  costLow: ["costUsd < 0.001, with total", { filters: [f("costUsd", "lt", 0.001)] }],
  costRare: ["costUsd < 0.00005 (0.12%), newest first, with total", { filters: [f("costUsd", "lt", 0.00005)] }],
  costRare2: ["costUsd < 0.0001 (0.25%), newest first, with total", { filters: [f("costUsd", "lt", 0.0001)] }],
  costPage: [
    "costUsd > 0.03 sorted by cost desc, skipTotalCount",
    { filters: [f("costUsd", "gt", 0.03)], sort: { field: "costUsd", direction: "desc" }, skipTotalCount: true },
  ],
  // Every seeded trace has tokens: the newest page of the service, each candidate's metric rebuilt.
  tracesTokens: [
    "traces metrics.totalTokens > 0, a page without total",
    { filters: [f("metrics.totalTokens", "gt", 0)], skipTotalCount: true },
    "traces",
  ],
  tracesTools: [
    "traces metrics.toolCalls > 0, a page without total",
    { filters: [f("metrics.toolCalls", "gt", 0)], skipTotalCount: true },
    "traces",
  ],
};
const chosen = (args.reads ?? "cost,latency").split(",").map((k) => {
  if (!READS[k]) throw new Error(`unknown read ${k}; known: ${Object.keys(READS).join(", ")}`);
  return k;
});

await runBench("session-search", { nats: true, dataDir: DATA_DIR, migrate: !args["no-migrate"] }, async (bench) => {
  const { sql } = bench.database;
  // With --platform-root both platforms run and take turns request by request (the machine's
  // load moves within seconds: only interleaved figures compare).
  const roots = [...(args["platform-root"] ? [resolve(args["platform-root"])] : []), ROOT];
  const urls: string[] = [];
  const pids: Array<number | undefined> = [];
  for (const cwd of roots) {
    const { port, child } = await bench.spawnApp("platform", { cwd, env: { LOG_LEVEL: "warn" } });
    urls.push(`http://127.0.0.1:${port}/api/v1/telemetry/otel`);
    pids.push(child.pid);
  }
  const postmaster = postmasterPid(DATA_DIR);
  const cpu = (j: number) => cpuByProcess({ platform: [pids[j]] }, postmaster);
  const names = roots.length === 2 ? ["before", "after"] : ["this checkout"];
  const headers = { authorization: `Token ${keys.platformKey}`, "content-type": "application/json" };
  const [{ n: sessions }] = await sql<{ n: number }[]>`select count(*)::int as n from session_analyses`;
  console.log(
    `session-search: ${sessions.toLocaleString("en")} session analyses; platforms: ${roots.join(", ")}; load ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  let last = 0;
  const once = async (base: string, body: Body, search: Search = "sessions") => {
    const wait = last + 25 - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    last = performance.now();
    const t0 = performance.now();
    const res = await fetch(`${base}/${search}/filtered`, {
      method: "POST",
      headers,
      body: JSON.stringify({ serviceName: keys.service, ...body }),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${JSON.stringify(body)} -> ${res.status} ${text}`);
    const f0 = performance.now();
    await sql`select 1`;
    return { ms, floor: performance.now() - f0, text };
  };
  const stats = (xs: number[]) => {
    xs.sort((a, b) => a - b);
    return { p50: pct(xs, 50), p99: pct(xs, 99) };
  };
  console.log(
    `| read | total | ${names.map((n) => `${n} p50 / p99 ms (CPU ms per read: Postgres, platform)`).join(" | ")} | floor p50 / p99 ms (select 1, same run) |`,
  );
  console.log(`| --- | --- | ${names.map(() => "---").join(" | ")} | --- |`);
  for (const k of chosen) {
    const [name, body, search] = READS[k];
    for (let i = 0; i < 10; i++) for (const url of urls) await once(url, body, search);
    const ms = urls.map(() => [] as number[]);
    const used = urls.map(() => ({ platform: 0, postgres: 0 }));
    const floor: number[] = [];
    const answers = urls.map(() => "");
    // Blocks of 10 requests per platform, in turns (which goes first alternates), each block's
    // CPU (the platform's, every Postgres process') charged to its platform.
    for (let b = 0; b < N / 10; b++) {
      const order = b % 2 ? [...urls.keys()].reverse() : [...urls.keys()];
      for (const j of order) {
        const c0 = cpu(j);
        for (let i = 0; i < 10; i++) {
          const r = await once(urls[j], body, search);
          ms[j].push(r.ms);
          floor.push(r.floor);
          answers[j] = r.text;
        }
        const d = cpuDelta(c0, cpu(j));
        used[j].platform += d.platform;
        used[j].postgres += d.postgres ?? 0;
      }
    }
    // Same data, nothing ingesting: both platforms must answer byte for byte alike.
    if (answers.some((a) => a !== answers[0])) throw new Error(`${name}: the platforms' answers differ`);
    const total = (JSON.parse(answers[0]) as { pagination: { total: number | null } }).pagination.total;
    const fl = stats(floor);
    console.log(
      `| ${name} | ${total?.toLocaleString("en") ?? "-"} | ${ms
        .map(stats)
        .map((s, j) => {
          const per = (x: number) => ((x * 1000) / ms[j].length).toFixed(1);
          return `${s.p50.toFixed(1)} / ${s.p99.toFixed(1)} (${per(used[j].postgres)}, ${per(used[j].platform)})`;
        })
        .join(" | ")} | ${fl.p50.toFixed(2)} / ${fl.p99.toFixed(2)} |`,
    );
  }
  console.log(
    `load at end ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
});
