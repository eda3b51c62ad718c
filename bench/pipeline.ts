/**
 * `npm run bench:pipeline`: the processor (apps/processor/src/main.ts, a child process) against a
 * real nats-server and Postgres started here.
 *
 * 1. Throughput INGEST -> Postgres: a backlog of --backlog trace messages drained (max rate),
 *    then --rate traces/s offered for --duration s while the consumer lag is sampled (it must not grow).
 * 2. Maturation lateness with --sessions sessions open at once: one trace each, offered at
 *    --open-rate/s, window --window s (all are open before the first matures); lateness =
 *    matured_at - last activity write - window, p50/p99/max, from Postgres.
 *
 * The floor, measured in the same run after 1a: the same number of traces written by the
 * processor's writer alone (writeIngestBatch, 500 per batch, two at once, in this process: no
 * NATS consume, decode, ack or activity keys). drain / floor is what the rest costs.
 *
 *   bun run bench/pipeline.ts [--backlog 20000] [--rate 1000] [--duration 15] [--sessions 10000] [--open-rate 200] [--window 60]
 *     [--processor-dir DIR]  run the processor of another checkout (before/after comparisons)
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { connectNats, createTopology, ensureTopology, subjects } from "@cellar/shared/nats/topology";
import { ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { ROOT, runBench, type BenchApp } from "./lib/harness";

const { values: args } = parseArgs({
  options: {
    backlog: { type: "string", default: "20000" },
    rate: { type: "string", default: "1000" },
    duration: { type: "string", default: "15" },
    sessions: { type: "string", default: "10000" },
    "open-rate": { type: "string", default: "200" },
    window: { type: "string", default: "60" },
    "processor-dir": { type: "string" },
  },
});
const BACKLOG = Number(args.backlog);
const RATE = Number(args.rate);
const DURATION = Number(args.duration);
const SESSIONS = Number(args.sessions);
const OPEN_RATE = Number(args["open-rate"]);
const WINDOW = Number(args.window);
const PROCESSOR_DIR = args["processor-dir"] ? resolve(args["processor-dir"]) : ROOT;

/**
 * CPU seconds used so far by the processor, Postgres (postmaster, its backends and reaped
 * children) and nats-server: a figure that holds on a shared machine, where wall-clock rates
 * depend on whatever else runs.
 */
function cpuSeconds(processorPid: number | undefined, natsPid: number | undefined, pgDataDir: string) {
  const stat = (pid: number) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      return {
        ppid: Number(f[1]),
        own: (Number(f[11]) + Number(f[12])) / 100,
        children: (Number(f[13]) + Number(f[14])) / 100,
      };
    } catch {
      return null;
    }
  };
  let postmaster: number | undefined;
  const pids = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  for (const pid of pids) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes(pgDataDir) && cmd.includes("postgres")) postmaster = pid;
    } catch {}
  }
  let pg = 0;
  if (postmaster) {
    const pm = stat(postmaster);
    pg += (pm?.own ?? 0) + (pm?.children ?? 0);
    for (const pid of pids) {
      const st = stat(pid);
      if (st?.ppid === postmaster) pg += st.own;
    }
  }
  const own = (pid: number | undefined) => (pid ? (stat(pid)?.own ?? 0) : 0);
  return { processor: own(processorPid), postgres: pg, nats: own(natsPid) };
}
type Cpu = ReturnType<typeof cpuSeconds>;
const cpuLine = (a: Cpu, b: Cpu, units: number, what: string) => {
  const per = (x: number) => ((x * 1000) / units).toFixed(2);
  const total = b.processor - a.processor + b.postgres - a.postgres + b.nats - a.nats;
  return `CPU per 1000 ${what}: processor ${per(b.processor - a.processor)} s, postgres ${per(b.postgres - a.postgres)} s, nats ${per(b.nats - a.nats)} s = ${per(total)} s -> ${Math.round((2 * units) / total)} ${what}/s on 2 dedicated cores`;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : NaN;

/** A realistic ~2.5 KB chat trace; every third carries a tool round trip. */
function tracePayload(sessionId: string, turn: number) {
  const start = new Date(Date.now() - 1000);
  const messages: any[] = [
    {
      role: "system",
      content:
        "You are Cellar Support, a friendly assistant for an online keyboard shop. Answer briefly and cite order ids.",
    },
  ];
  for (let t = 0; t <= turn; t++) {
    messages.push({
      role: "user",
      content: `Turn ${t}: where is my order A-10${40 + t}? The page still says processing.`,
    });
    if (t < turn)
      messages.push({
        role: "assistant",
        content: `Order A-10${40 + t} left the warehouse; delivery expected in two business days.`,
      });
  }
  if (turn % 3 === 2) {
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: `call_${sessionId}_${turn}`,
          type: "function",
          function: { name: "lookup_order", arguments: '{"order_id":"A-1042"}' },
        },
      ],
    });
    messages.push({
      role: "tool",
      tool_call_id: `call_${sessionId}_${turn}`,
      content: JSON.stringify({ id: "A-1042", status: "shipped", carrier: "DHL", eta: "2025-03-04" }),
    });
  }
  return {
    provider: "openai" as const,
    service_name: "support-bot",
    session_id: sessionId,
    environment: "bench",
    start_time: start.toISOString(),
    end_time: new Date(start.getTime() + 900).toISOString(),
    request: {
      model: "gpt-4o-mini",
      messages,
      tools: [
        {
          type: "function",
          function: {
            name: "lookup_order",
            description: "Find an order",
            parameters: { type: "object", properties: { order_id: { type: "string" } } },
          },
        },
      ],
    },
    responses: [
      {
        id: `chatcmpl-${sessionId}-${turn}`,
        object: "chat.completion",
        model: "gpt-4o-mini-2024-07-18",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "Your order A-1042 shipped with DHL and should arrive on March 4th.",
            },
            finish_reason: "stop",
          },
        ],
        usage: {
          prompt_tokens: 400 + turn * 60,
          completion_tokens: 30,
          total_tokens: 430 + turn * 60,
          prompt_tokens_details: { cached_tokens: 256 },
        },
      },
    ],
  };
}

async function main() {
  await runBench("pipeline", { nats: true }, async (bench) => {
    const nats = bench.nats!;
    let processor: BenchApp | undefined;
    const startProcessor = async (windowSeconds: number) => {
      processor = await bench.spawnApp("processor", {
        cwd: PROCESSOR_DIR,
        // BENCH_PROCESSOR_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/x" profiles the processor.
        bunFlags: (process.env.BENCH_PROCESSOR_FLAGS ?? "").split(" ").filter(Boolean),
        env: { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error", MATURATION_WINDOW_SECONDS: String(windowSeconds) },
        stdio: ["ignore", process.env.BENCH_LOG_LEVEL ? "inherit" : "ignore", "inherit"],
        graceMs: 10_000,
      });
    };
    const stopProcessor = async () => {
      const p = processor;
      processor = undefined;
      await p?.stop();
    };
    const { database } = bench;
    const { sql } = database;
    const tenant = await bench.tenant();
    const nc = await connectNats(nats.url, "bench-pipeline");
    const topology = createTopology();
    const { js, jsm } = await ensureTopology(nc, topology);
    let seq = 0;
    const publish = (sessionId: string, turn: number) => {
      const message: IngestMessage = {
        kind: "trace",
        messageId: `bench-${++seq}`,
        tenantId: tenant.tenantId,
        serviceName: "support-bot",
        receivedAt: new Date().toISOString(),
        payload: tracePayload(sessionId, turn),
      };
      // Marked as ingest marks what it publishes: the processor decodes it as it decodes ingest's.
      return js.publish(subjects.ingestTrace(topology), JSON.stringify(message), {
        msgID: message.messageId,
        timeout: 30_000,
        headers: ingestCheckedHeaders(),
      });
    };
    const lag = async () => {
      const info = await jsm.consumers.info(topology.ingestStream, ingestStream.consumer!.durable);
      return info.num_pending + info.num_ack_pending;
    };
    /** Offers `count` messages at `perSecond` in 50 ms ticks. */
    const offer = async (
      count: number,
      perSecond: number,
      make: (i: number) => [string, number],
      onTick?: () => Promise<void>,
    ) => {
      const started = performance.now();
      let sent = 0;
      let nextSample = started + 1000;
      while (sent < count) {
        const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * perSecond) + 1);
        const batch: Promise<unknown>[] = [];
        for (; sent < due; sent++) batch.push(publish(...make(sent)));
        await Promise.all(batch);
        if (onTick && performance.now() >= nextSample) {
          nextSample += 1000;
          await onTick();
        }
        await sleep(50);
      }
      return (performance.now() - started) / 1000;
    };

    // 1a. Backlog drain: the processor's top speed.
    const BACKLOG_SESSIONS = Math.max(1, Math.floor(BACKLOG / 5));
    for (let i = 0; i < BACKLOG; i += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, BACKLOG - i) }, (_, k) =>
          publish(`backlog-${(i + k) % BACKLOG_SESSIONS}`, Math.floor((i + k) / BACKLOG_SESSIONS)),
        ),
      );
    }
    const pgDir = join(bench.scratch, "pg");
    const cpu = () => cpuSeconds(processor?.child.pid, nats.process.pid, pgDir);
    await startProcessor(3600);
    await sleep(1500); // start-up (migrations, topology) is not pipeline work
    const cpu0 = cpu();
    const drainStart = performance.now();
    await sleep(200);
    while ((await lag()) > 0) await sleep(100);
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const [{ n: stored }] = await sql<{ n: number }[]>`select count(*)::int as n from traces`;
    console.log(
      `backlog: ${BACKLOG} traces (${BACKLOG_SESSIONS} sessions) drained INGEST -> Postgres in ${drainSeconds.toFixed(1)} s = ${Math.round(BACKLOG / drainSeconds)} traces/s; ${stored} rows`,
    );
    console.log(`  ${cpuLine(cpu0, cpu(), BACKLOG, "traces")}`);

    // Floor: the writer alone on as many traces (same sizes, other sessions), two batches at once.
    {
      const messages = Array.from(
        { length: BACKLOG },
        (_, i): IngestMessage => ({
          kind: "trace",
          messageId: `floor-${i}`,
          tenantId: tenant.tenantId,
          serviceName: "support-bot",
          receivedAt: new Date().toISOString(),
          payload: tracePayload(`floor-${i % BACKLOG_SESSIONS}`, Math.floor(i / BACKLOG_SESSIONS)),
        }),
      );
      const batches: IngestMessage[][] = [];
      for (let i = 0; i < messages.length; i += 500) batches.push(messages.slice(i, i + 500));
      const pgBefore = cpu().postgres;
      const floorStart = performance.now();
      let next = 0;
      await Promise.all(
        [0, 1].map(async () => {
          while (next < batches.length) await writeIngestBatch(sql, batches[next++]);
        }),
      );
      const floorSeconds = (performance.now() - floorStart) / 1000;
      const floorRate = BACKLOG / floorSeconds;
      console.log(
        `floor: the writer alone wrote ${BACKLOG} traces in ${floorSeconds.toFixed(1)} s = ${Math.round(floorRate)} traces/s (postgres ${(((cpu().postgres - pgBefore) * 1000) / BACKLOG).toFixed(2)} s CPU per 1000); drain / floor = ${Math.round((100 * BACKLOG) / drainSeconds / floorRate)}%`,
      );
    }

    // 1b. Sustained offered rate; lag sampled every second.
    const lags: number[] = [];
    const RATE_SESSIONS = Math.max(1, Math.floor(RATE)); // ~1 trace per session per second
    const offeredSeconds = await offer(
      RATE * DURATION,
      RATE,
      (i) => [`steady-${i % RATE_SESSIONS}`, Math.floor(i / RATE_SESSIONS)],
      async () => void lags.push(await lag()),
    );
    const tailStart = performance.now();
    while ((await lag()) > 0) await sleep(50);
    const tail = (performance.now() - tailStart) / 1000;
    const half = Math.floor(lags.length / 2);
    const avg = (xs: number[]) => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0);
    console.log(
      `sustained: offered ${RATE}/s for ${offeredSeconds.toFixed(1)} s (${Math.round((RATE * DURATION) / offeredSeconds)}/s achieved by the publisher); lag samples ${lags.join(",")}; first-half avg ${avg(lags.slice(0, half))}, second-half avg ${avg(lags.slice(half))}, max ${Math.max(0, ...lags)}; drained ${tail.toFixed(2)} s after the last publish`,
    );

    // 2. Lateness: SESSIONS open at once. Phase 1's entities are settled first (as if matured and
    // published) and their keys dropped, so neither their markers nor the sweep compete here.
    await stopProcessor();
    await sql`update sessions set status = 'matured', maturation_count = 1, published_count = 1, matured_at = now()`;
    await sql`delete from pending_traces`; // traces: matured and published = no pending row (migration 0016)
    await jsm.streams.purge(`KV_${topology.activityBucket}`);
    await startProcessor(WINDOW);
    await sleep(1000);
    const cpuOpen = cpu();
    const openSeconds = await offer(SESSIONS, OPEN_RATE, (i) => [`lat-${i}`, 0]);
    while ((await lag()) > 0) await sleep(50);
    const cpuOpened = cpu();
    console.log(
      `opened ${SESSIONS} sessions in ${openSeconds.toFixed(1)} s (window ${WINDOW} s: all open before the first can mature)`,
    );
    const deadline = Date.now() + (WINDOW + openSeconds + 120) * 1000;
    let matured = 0;
    while (Date.now() < deadline) {
      [{ n: matured }] = await sql<
        { n: number }[]
      >`select count(*)::int as n from sessions where session_id like 'lat-%' and published_count >= 1`;
      if (matured >= SESSIONS) break;
      await sleep(500);
    }
    const cpuMatured = cpu();
    const rows = await sql<{ late: number }[]>`
      select extract(epoch from matured_at - last_ingested_at) - ${WINDOW} as late from sessions where session_id like 'lat-%' and matured_at is not null`;
    const late = rows.map((r) => Number(r.late) * 1000).sort((a, b) => a - b);
    const [{ n: events }] = await sql<
      { n: number }[]
    >`select count(*)::int as n from sessions where session_id like 'lat-%' and published_count = maturation_count and maturation_count = 1`;
    const info = await jsm.streams.info(topology.maturedStream);
    console.log(
      `lateness (matured_at - last write - window) over ${late.length}/${SESSIONS} sessions: p50 ${pct(late, 50).toFixed(0)} ms, p99 ${pct(late, 99).toFixed(0)} ms, max ${pct(late, 100).toFixed(0)} ms; ${events} published once; MATURED stream holds ${info.state.messages} messages (a message per session maturation, a batch per chunk of trace maturations)`,
    );
    console.log(`  writing: ${cpuLine(cpuOpen, cpuOpened, SESSIONS, "traces")}`);
    console.log(`  maturing: ${cpuLine(cpuOpened, cpuMatured, SESSIONS, "sessions (+ their traces)")}`);

    await stopProcessor();
    await nc.close();
    await database.close();
  });
}

await main();
