/**
 * `npm run bench:ingest`: sustained traces/s and latency of POST /raw/traces on loopback, beside
 * the same load against a bare Bun.serve that only parses the JSON and answers 200 (the ceiling
 * of this machine). Real apps/ingest/src/main.ts (PubAck durability) over a real nats-server and
 * Postgres (for key lookups), both started here under a scratch directory. A third target is the
 * same app with an instant PubAck (no durability), which separates the cost of the contract's
 * per-request checks from the cost of storing. Load: autocannon.
 *
 *   bun run bench/ingest.ts [--duration 10] [--connections 32] [--warmup 2] [--rounds 3] [--profile <dir>]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
// @ts-expect-error autocannon ships no types; the little used here is typed below.
import autocannonUntyped from "autocannon";
import type { JetStreamClient } from "@nats-io/jetstream";
import { createIngestApp } from "../apps/ingest/src/app";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createDatabase } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { connectNats, createTopology } from "@cellar/shared/nats/topology";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { runBench } from "./lib/harness";
import { makeTemplates } from "./lib/traces";

// Child mode: the ceiling. Parse the JSON (as ingest must) and answer what ingest answers.
if (process.argv[2] === "--bare-server") {
  const server = Bun.serve({
    port: Number(process.argv[3]),
    hostname: "127.0.0.1",
    async fetch(req) {
      JSON.parse(await req.text());
      return new Response('{"status":"success"}', { headers: { "content-type": "application/json" } });
    },
  });
  process.on("SIGTERM", () => {
    server.stop(true);
    process.exit(0);
  });
  await new Promise(() => {});
}

// Child mode: the same ingest app with JetStream replaced by an immediate PubAck. Not a product
// mode: it prices the work the contract asks of every request (auth, strict parsing, schema,
// message id) apart from durability, to show what part of the gap is which.
if (process.argv[2] === "--no-durability-server") {
  const database = createDatabase(process.env.DATABASE_URL!, { max: 2 });
  const instantAck = {
    publish: async () => ({ stream: "INGEST", seq: 0, duplicate: false }),
  } as unknown as JetStreamClient;
  const app = createIngestApp({
    js: instantAck,
    topology: createTopology(),
    keys: new KeyResolver(database.db),
    logger: createLogger("error"),
    maxBodyBytes: 4 * 1024 * 1024,
  });
  app.listen({ port: Number(process.argv[3]), hostname: "127.0.0.1" });
  process.on("SIGTERM", () => process.exit(0));
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    /** Writes a CPU profile (.cpuprofile + .md) of the ingest process into this directory. */
    profile: { type: "string" },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
// Targets alternate for this many rounds and medians are reported. The machine is shared
// (2 cores): alternating exposes both targets to the same background load, and server CPU per
// trace is reported because it is far less sensitive to that load than throughput is.
const ROUNDS = Number(args.rounds);

interface CannonResult {
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number };
}
const autocannon = autocannonUntyped as (opts: Record<string, unknown>) => Promise<CannonResult>;

interface Figures {
  name: string;
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
  /** CPU time of the server side (server process, plus nats-server for ingest) per 2xx, us. */
  cpuUsPerReq: number;
  /** The same split per process, in the order of the pids given. */
  cpuSplit: number[];
  /** CPU of this process (autocannon) per 2xx, us. */
  loadgenUsPerReq: number;
}

/** utime + stime of a process in seconds (Linux /proc; 0 elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Across all runs: a body is never repeated, so no request is answered from the duplicate window.
let seq = 0;

async function runLoad(
  name: string,
  url: string,
  headers: Record<string, string>,
  templates: string[],
  duration: number,
  serverPids: Array<number | undefined>,
): Promise<Figures> {
  const cpuBefore = serverPids.map(cpuSeconds);
  const loadgenBefore = process.cpuUsage();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    // A unique session per request: nothing is deduplicated, every trace is really stored.
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => ({
          ...req,
          body: templates[seq % templates.length].replace("__SESSION__", `bench-${process.pid}-${seq++}`),
        }),
      },
    ],
  });
  const ok = result["2xx"];
  const cpuSplit = serverPids.map((pid, i) => (ok ? ((cpuSeconds(pid) - cpuBefore[i]) * 1e6) / ok : 0));
  const cpuUsPerReq = cpuSplit.reduce((a, b) => a + b, 0);
  const lg = process.cpuUsage(loadgenBefore);
  const loadgenUsPerReq = ok ? (lg.user + lg.system) / ok : 0;
  return {
    name,
    rps: ok / duration,
    ok,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerReq,
    cpuSplit,
    loadgenUsPerReq,
  };
}

async function main() {
  await runBench("ingest", { nats: true, poolMax: 2 }, async (bench) => {
    const nats = bench.nats!;
    const tenant = await bench.tenant();

    const templates = makeTemplates(200);
    const sizes = templates.map((t) => t.length).sort((a, b) => a - b);
    console.log(
      `bodies: ${templates.length} templates, ${sizes[0]}-${sizes[sizes.length - 1]} bytes (median ${sizes[sizes.length >> 1]}); ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per target after ${WARMUP} s warm-up`,
    );

    const profileFlags = args.profile ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${resolve(args.profile)}`] : [];
    const barePort = await freePort();
    const bareServer = bench.spawnScript(["bench/ingest.ts", "--bare-server", String(barePort)]);
    const stubPort = await freePort();
    const stubServer = bench.spawnScript(["bench/ingest.ts", "--no-durability-server", String(stubPort)]);
    const { child: ingest, port: ingestPort } = await bench.spawnApp("ingest", {
      bunFlags: profileFlags,
      // Measure the pipeline, not the limiter: one credential would otherwise cap at 500/s.
      env: { INGEST_RATE_LIMIT_PER_SECOND: "0" },
    });
    await Promise.all([waitForPort(barePort), waitForPort(stubPort)]);

    const auth = { authorization: `Bearer ${tenant.telemetryKey}` };
    const targets: Array<{ name: string; url: string; pids: Array<number | undefined> }> = [
      {
        name: "bare Bun.serve (JSON.parse + 200)",
        url: `http://127.0.0.1:${barePort}/raw/traces`,
        pids: [bareServer.pid],
      },
      {
        name: "apps/ingest (PubAck durability)",
        url: `http://127.0.0.1:${ingestPort}/raw/traces`,
        pids: [ingest.pid, nats.process.pid],
      },
      {
        name: "apps/ingest, PubAck stubbed (no durability)",
        url: `http://127.0.0.1:${stubPort}/raw/traces`,
        pids: [stubServer.pid],
      },
    ];
    const rounds: Figures[][] = targets.map(() => []);
    for (const t of targets) if (WARMUP > 0) await runLoad(t.name, t.url, auth, templates, WARMUP, t.pids);
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < targets.length; i++) {
        const f = await runLoad(targets[i].name, targets[i].url, auth, templates, DURATION, targets[i].pids);
        rounds[i].push(f);
        console.log(
          `round ${r + 1}: ${f.name}: ${Math.round(f.rps)} traces/s, p50 ${f.p50} ms, p99 ${f.p99} ms, server CPU ${Math.round(f.cpuUsPerReq)} us/trace${f.cpuSplit.length > 1 ? ` (app ${Math.round(f.cpuSplit[0])} + nats-server ${Math.round(f.cpuSplit[1])})` : ""}, autocannon ${Math.round(f.loadgenUsPerReq)} us/trace, load avg ${loadavg()[0].toFixed(1)}`,
        );
      }
    }

    const nc = await connectNats(nats.url, "bench-check");
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const info = await (await jetstreamManager(nc)).streams.info(createTopology().ingestStream);
    await nc.close();

    console.log("\nMedian over rounds:\n");
    console.log(
      "| target | traces/s | p50 ms | p99 ms | server CPU us/trace | autocannon CPU us/trace | non-2xx | errors |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    for (const fs of rounds) {
      const m = (pick: (f: Figures) => number) => median(fs.map(pick));
      console.log(
        `| ${fs[0].name} | ${Math.round(m((f) => f.rps))} | ${m((f) => f.p50)} | ${m((f) => f.p99)} | ${Math.round(m((f) => f.cpuUsPerReq))} | ${Math.round(m((f) => f.loadgenUsPerReq))} | ${fs.reduce((n, f) => n + f.non2xx, 0)} | ${fs.reduce((n, f) => n + f.errors, 0)} |`,
      );
    }
    // Each ingest round is paired with the bare round just before it (same background load).
    const ratios = rounds[1].map((f, i) => f.rps / rounds[0][i].rps);
    console.log(
      `\ningest / ceiling, per round: ${ratios.map((r) => `${(100 * r).toFixed(0)}%`).join(", ")}; median ${(100 * median(ratios)).toFixed(0)}% (target >= 50%)`,
    );
    const stubRatios = rounds[2].map((f, i) => f.rps / rounds[0][i].rps);
    console.log(
      `ingest without durability / ceiling, per round: ${stubRatios.map((r) => `${(100 * r).toFixed(0)}%`).join(", ")}; median ${(100 * median(stubRatios)).toFixed(0)}%`,
    );
    const ingestOk = rounds[1].reduce((n, f) => n + f.ok, 0);
    console.log(
      `INGEST stream holds ${info.state.messages} messages for ${ingestOk} measured 200s plus the warm-up's (every 200 is a stored message)`,
    );
  });
}

await main();
