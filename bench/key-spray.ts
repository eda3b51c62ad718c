/**
 * `bun run bench/key-spray.ts`: a random-key spray against ingest, next to a real client.
 *
 * The real apps/ingest/src/main.ts runs as a child over a real nats-server and Postgres (started
 * here in a scratch directory). A real client sends traces with a valid telemetry key at a fixed
 * rate and records its latency; meanwhile autocannon sends requests with a fresh random key each,
 * as fast as it can (loopback, bounded by --duration), from a child process. Printed: the real client's p50/p99 alone
 * (the floor, same run) and under the spray, the spray's answers by status, and Postgres
 * transactions per second (pg_stat_database.xact_commit: every key lookup is one).
 *
 *   bun run bench/key-spray.ts [--duration 30] [--connections 16] [--client-rps 50] [--root <checkout>]
 *
 * `--root` runs the ingest app of another checkout (e.g. a worktree of an older commit, for a
 * before/after comparison); its node_modules must resolve @cellar/shared to its own shared/.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
// @ts-expect-error autocannon ships no types; the little used here is typed below.
import autocannonUntyped from "autocannon";
import postgres from "postgres";
import { runBench } from "./lib/harness";

// Child mode: the sprayer, in its own process so its CPU is not the real client's event loop.
if (process.argv[2] === "--spray") {
  const [, , , url, duration, connections] = process.argv;
  const result = await (
    autocannonUntyped as (
      o: Record<string, unknown>,
    ) => Promise<{ requests: { average: number }; statusCodeStats?: Record<string, { count: number }>; errors: number }>
  )({
    url,
    method: "POST",
    connections: Number(connections),
    duration: Number(duration),
    body: "{}",
    headers: { "content-type": "application/json" },
    // A fresh random key on every request: no cache can hold them.
    requests: [
      {
        setupRequest: (req: { headers: Record<string, string> }) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer cel_tk_${crypto.randomUUID()}` },
        }),
      },
    ],
  });
  console.log(JSON.stringify(result));
  process.exit(0);
}

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "30" },
    connections: { type: "string", default: "16" },
    "client-rps": { type: "string", default: "50" },
    root: { type: "string", default: resolve(import.meta.dir, "..") },
  },
});
const DURATION = Number(args.duration);
const CLIENT_RPS = Number(args["client-rps"]);
const autocannon = autocannonUntyped as (
  opts: Record<string, unknown>,
) => Promise<{ requests: { average: number }; statusCodeStats?: Record<string, { count: number }>; errors: number }>;

await runBench("key-spray", { nats: true, poolMax: 2 }, async (bench) => {
  const tenant = await bench.tenant({ plan: "pro" });
  const { port } = await bench.spawnApp("ingest", { cwd: args.root, env: { INGEST_RATE_LIMIT_PER_SECOND: "0" } });
  const url = `http://127.0.0.1:${port}/raw/traces`;
  const stats = postgres(bench.databaseUrl, { max: 1, onnotice: () => {} });
  const xacts = async () =>
    Number((await stats`select sum(xact_commit + xact_rollback)::bigint as n from pg_stat_database`)[0].n);

  let seq = 0;
  const trace = () => {
    const now = new Date().toISOString();
    return JSON.stringify({
      provider: "openai",
      service_name: "bench",
      session_id: `s-${seq % 50}`,
      trace_id: `t-${++seq}`,
      environment: "bench",
      start_time: now,
      end_time: now,
      request: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
      responses: [
        {
          id: `c-${seq}`,
          object: "chat.completion",
          model: "gpt-4o-mini",
          choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        },
      ],
    });
  };

  /** The real client: CLIENT_RPS traces per second for `seconds`, each latency recorded. */
  async function realClient(seconds: number) {
    const latencies: number[] = [];
    const statuses: Record<number, number> = {};
    const end = performance.now() + seconds * 1000;
    const gap = 1000 / CLIENT_RPS;
    const inFlight: Promise<void>[] = [];
    for (let next = performance.now(); next < end; next += gap) {
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      inFlight.push(
        (async () => {
          const t0 = performance.now();
          const res = await fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
            body: trace(),
          });
          await res.arrayBuffer();
          latencies.push(performance.now() - t0);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        })(),
      );
    }
    await Promise.all(inFlight);
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
    return { n: latencies.length, p50: q(0.5), p99: q(0.99), statuses };
  }

  // Warm up (key cached, JIT), then the floor: the real client alone.
  await realClient(2);
  let x0 = await xacts();
  let t0 = performance.now();
  const alone = await realClient(Math.min(DURATION, 10));
  const aloneTps = ((await xacts()) - x0) / ((performance.now() - t0) / 1000);

  x0 = await xacts();
  t0 = performance.now();
  const [spray, underSpray] = await Promise.all([
    new Promise<Awaited<ReturnType<typeof autocannon>>>((done, fail) => {
      const sprayer = spawn(process.execPath, [import.meta.path, "--spray", url, String(DURATION), args.connections!], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      sprayer.stdout!.on("data", (d) => (out += d));
      sprayer.on("exit", () => {
        try {
          done(JSON.parse(out));
        } catch (err) {
          fail(err);
        }
      });
    }),
    realClient(DURATION),
  ]);
  const sprayTps = ((await xacts()) - x0) / ((performance.now() - t0) / 1000);
  const sprayStatuses = Object.fromEntries(Object.entries(spray.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));

  const f = (n: number) => n.toFixed(1);
  console.log(
    `key spray vs ingest (${args.root}), ${DURATION}s, ${args.connections} spray connections, real client ${CLIENT_RPS}/s`,
  );
  console.log(
    `  real client alone (floor):  p50 ${f(alone.p50)} ms  p99 ${f(alone.p99)} ms  n=${alone.n} ${JSON.stringify(alone.statuses)}  postgres ${f(aloneTps)} xact/s`,
  );
  console.log(
    `  real client under spray:    p50 ${f(underSpray.p50)} ms  p99 ${f(underSpray.p99)} ms  n=${underSpray.n} ${JSON.stringify(underSpray.statuses)}  (p99 ${f(underSpray.p99 / alone.p99)}x floor)`,
  );
  console.log(
    `  spray: ${f(spray.requests.average)} req/s answered ${JSON.stringify(sprayStatuses)} errors ${spray.errors}; postgres ${f(sprayTps)} xact/s`,
  );
  await stats.end();
});
