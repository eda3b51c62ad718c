/**
 * `npm run bench -- <name> [args]`: the benches that guard a figure of docs/performance.md
 * ("Current state"), each by name, each printing its figure beside a floor measured in the same
 * run. `npm run bench` alone lists them. Arguments after the name go to the bench.
 *
 * The one-off probes of past rounds were deleted once their findings were in the docs' journal
 * (docs/performance.md); `git log -- bench/<file>` brings one back.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

interface Bench {
  file: string;
  guards: string;
}

export const BENCHES: Record<string, Bench> = {
  e2e: { file: "e2e.ts", guards: "sustained traces/s and system CPU per trace beside the floor (publish + COPY)" },
  ingest: { file: "ingest.ts", guards: "ingest traces/s and CPU per trace beside a bare Bun.serve" },
  pipeline: {
    file: "pipeline.ts",
    guards: "the processor alone (a child process): traces/s written and CPU per trace",
  },
  otlp: {
    file: "otlp.ts",
    guards: "GenAI spans/s through POST /v1/traces beside traces/s through /raw/traces, same run",
  },
  flood: {
    file: "flood.ts",
    guards:
      "another tenant's ingest p99 and maturation lateness during one tenant's flood of each door, beside the same run without it; refusal CPU for 1 KB vs 1 MB bodies",
  },
  "grpc-refusals": {
    file: "grpc-refusals.ts",
    guards:
      "ingest CPU and bytes on the wire per refused OTLP/gRPC call (1 KB and 268 KB messages) beside an OTLP/HTTP 429",
  },
  "wake-tail": {
    file: "wake-tail.ts",
    guards:
      "a bare server's request p99 with every core busy with batch work at each priority Linux offers, beside the same with none and with a core free",
  },
  dispatch: { file: "dispatch.ts", guards: "webhook deliveries/s beside a bare loop of signed fetches" },
  startup: {
    file: "startup.ts",
    guards:
      "a killed app's start to /ready under a CPU hog, from source, bundled and compiled with bytecode, beside a bare `bun -e 0`",
  },
  "dispatch-price": {
    file: "dispatch-price.ts",
    guards:
      "one delivery's steps (fan-out, signed POST, success record, DELIVERIES message), CPU each beside a bare insert / signed POST / publish",
  },
  "dispatch-retention": {
    file: "dispatch-retention.ts",
    guards:
      "webhook housekeeping at retention scale (a day's prune, reconcile) with and without the created_at index, beside a bare delete by key; the insert each index entry costs",
  },
  "dispatch-ids": {
    file: "dispatch-ids.ts",
    guards:
      "the fan-out's insert with random against time-prefixed delivery ids on a table at retention scale (Postgres CPU, WAL with full page writes), beside an insert into an unindexed copy",
  },
  reads: { file: "reads.ts", guards: "platform read latency beside GET /health at the same concurrency" },
  "transcript-read": { file: "transcript-read.ts", guards: "the lean transcript page of long sessions, p50/p99" },
  "session-search": { file: "session-search.ts", guards: "metric-filter session searches on a seeded cluster" },
  overview: { file: "overview.ts", guards: "the overview read on a seeded cluster, after the rollup backfill" },
  dashboard: { file: "dashboard.ts", guards: "time to first render of dashboard pages in headless Chromium" },
  analysis: {
    file: "message-cost.ts",
    guards: "CPU per trace of each stage (analysis, deflate) beside parse/publish floors",
  },
  text: { file: "text-matching.ts", guards: "the detectors' matchers per MB of text beside JSON.parse of it" },
  sdk: { file: "sdk.ts", guards: "SDK caller-path overhead and memory beside the bare call" },
  "python-sdk": { file: "python-sdk.py", guards: "the Python SDK's caller-path overhead beside the bare call" },
  fairness: { file: "fairness.ts", guards: "a tenant's webhook latency while another floods dead endpoints" },
  monitors: { file: "monitors.ts", guards: "what monitors cost the processor" },
  "maturation-feeds": {
    file: "maturation-feeds.ts",
    guards: "the rollups and monitor evaluation per session maturation, beside the maturation itself",
  },
  "maturation-turns": {
    file: "maturation-turns.ts",
    guards:
      "a re-maturation at turn 10, 100 and 1,000 from a continued fold beside a whole fold, and the bare maturation",
  },
  "maturation-profile": {
    file: "maturation-profile.ts",
    guards: "maturation alone, CPU per trace (processor, Postgres, NATS) and statements, beside the bare maturation",
  },
  evaluations: {
    file: "evaluations.ts",
    guards: "online evaluations: CPU per session and maturation-to-score p50/p99 beside a service without evaluators",
  },
  retention: { file: "retention.ts", guards: "the retention job on a seeded cluster: rows removed per second" },
  "long-conversation": {
    file: "long-conversation.ts",
    guards: "a session's fold per trace from digests beside from payloads, at turn 10, 100 and 1,000",
  },
  "maturation-memory": {
    file: "maturation-memory.ts",
    guards: "processor peak RSS maturing a very large session; another tenant's lag meanwhile",
  },
  "deep-pages": { file: "deep-pages.ts", guards: "deep page latency by offset and by cursor" },
  chaos: { file: "chaos.ts", guards: "faults on a 3-node cluster with a ledger: nothing lost, recovery time" },
  seed: { file: "seed.ts", guards: "(a tool: seeds a database for the others)" },
  "profile-summary": {
    file: "profile-summary.ts",
    guards: "(a tool: sorts a --cpu-prof profile of the processor into the analysis bench's stages)",
  },
};

if (import.meta.main) {
  const [name, ...rest] = process.argv.slice(2);
  const bench = name ? BENCHES[name] : undefined;
  if (!bench) {
    if (name) console.error(`no bench named ${JSON.stringify(name)}`);
    console.log("npm run bench -- <name> [args]\n");
    for (const [n, b] of Object.entries(BENCHES)) console.log(`  ${n.padEnd(18)} ${b.guards}`);
    process.exit(name ? 2 : 0);
  }
  const path = join(import.meta.dir, bench.file);
  const [cmd, args] = bench.file.endsWith(".py")
    ? ["python3", [path, ...rest]]
    : [process.execPath, ["run", path, ...rest]];
  process.exit(spawnSync(cmd, args, { stdio: "inherit" }).status ?? 1);
}
