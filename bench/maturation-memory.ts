/**
 * `bun run bench/maturation-memory.ts`: peak RSS of the processor (apps/processor/src/main.ts, a
 * child process) maturing one very large session, and the ingest lag of another tenant meanwhile.
 * Real nats-server and Postgres started here; INGEST messages published directly (the ingest
 * app's 4 MiB body cap is respected: each trace is --trace-mb).
 *
 * 1. The big session is written: --session-mb of traces, each carrying a fresh document of
 *    --trace-mb (the history a client sends is the system prompt, the last reply and the new
 *    document: what a long document-processing session looks like under the body cap).
 * 2. A fresh processor is started (its RSS starts clean); a second tenant offers --other-rate
 *    small traces/s throughout. Floor: that tenant's lag (publish -> row in Postgres) and the
 *    processor's RSS before the big session's marker fires; then both while it matures.
 *
 *   bun run bench/maturation-memory.ts [--session-mb 2048] [--trace-mb 3.5] [--other-rate 20] [--window 15]
 *   BENCH_PROCESSOR_ROOT=/path/to/other/checkout runs that checkout's processor instead (before/after).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { connectNats, createTopology, ensureTopology, subjects } from "@cellar/shared/nats/topology";
import type { IngestMessage } from "@cellar/shared/payloads";
import { runBench, type BenchApp } from "./lib/harness";

const ROOT = process.env.BENCH_PROCESSOR_ROOT ?? resolve(import.meta.dir, "..");
const { values: args } = parseArgs({
  options: {
    "session-mb": { type: "string", default: "2048" },
    "trace-mb": { type: "string", default: "3.5" },
    "other-rate": { type: "string", default: "20" },
    window: { type: "string", default: "15" },
  },
});
const SESSION_MB = Number(args["session-mb"]);
const TRACE_MB = Number(args["trace-mb"]);
const OTHER_RATE = Number(args["other-rate"]);
const WINDOW = Number(args.window);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] : NaN;
};
const rssMb = (pid: number | undefined) => {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};

/** ~`bytes` of words that do not compress much (seeded, so runs are comparable). */
function document(bytes: number, seed: number): string {
  let a = seed >>> 0;
  const rnd = () => (a = (a * 1664525 + 1013904223) >>> 0) / 4294967296;
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = Math.floor(rnd() * 1e9).toString(36);
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(" ");
}

async function main() {
  await runBench("memory", { nats: true }, async (bench) => {
    const nats = bench.nats!;
    let processor: BenchApp | undefined;
    let child: BenchApp["child"] | undefined;
    const startProcessor = async () => {
      processor = await bench.spawnApp("processor", {
        cwd: ROOT,
        env: { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error", MATURATION_WINDOW_SECONDS: String(WINDOW) },
        graceMs: 10_000,
      });
      child = processor.child;
    };
    const stopProcessor = async () => {
      const p = processor;
      processor = undefined;
      child = undefined;
      await p?.stop();
    };
    const { database } = bench;
    const { sql } = database;
    const big = await bench.tenant({ name: "big" });
    const other = await bench.tenant({ name: "other" });
    const nc = await connectNats(nats.url, "bench-memory");
    const topology = createTopology();
    const { js, jsm } = await ensureTopology(nc, topology);
    let seq = 0;
    const publish = (tenantId: string, serviceName: string, payload: Record<string, unknown>) => {
      const message: IngestMessage = {
        kind: "trace",
        messageId: `bench-${++seq}`,
        tenantId,
        serviceName,
        receivedAt: new Date().toISOString(),
        payload: payload as any,
      };
      return js.publish(subjects.ingestTrace(topology), JSON.stringify(message), {
        msgID: message.messageId,
        timeout: 60_000,
      });
    };
    const lag = async () => {
      const info = await jsm.consumers.info(topology.ingestStream, ingestStream.consumer!.durable);
      return info.num_pending + info.num_ack_pending;
    };

    // 1. The big session, written at the pace the processor stores it (a small INGEST backlog).
    const traces = Math.max(1, Math.round(SESSION_MB / TRACE_MB));
    const t0 = Date.now() - traces * 60_000;
    await startProcessor();
    await sleep(1500);
    let ingestPeak = 0;
    const started = performance.now();
    let lastReply = "Ready.";
    for (let i = 0; i < traces; i++) {
      const start = new Date(t0 + i * 60_000);
      await publish(big.tenantId, "doc-bot", {
        provider: "openai",
        service_name: "doc-bot",
        session_id: "huge-1",
        trace_id: `huge-${i}`,
        start_time: start.toISOString(),
        end_time: new Date(start.getTime() + 4_000).toISOString(),
        request: {
          model: "gpt-4o-mini",
          messages: [
            { role: "system", content: "Summarise each document." },
            { role: "assistant", content: lastReply },
            { role: "user", content: document(TRACE_MB * 1024 * 1024, i + 1) },
          ],
        },
        responses: [
          {
            id: `r-${i}`,
            object: "chat.completion",
            model: "gpt-4o-mini-2024-07-18",
            choices: [{ index: 0, message: { role: "assistant", content: `Summary ${i}.` }, finish_reason: "stop" }],
            usage: { prompt_tokens: 900_000, completion_tokens: 40, total_tokens: 900_040 },
          },
        ],
      });
      lastReply = `Summary ${i}.`;
      ingestPeak = Math.max(ingestPeak, rssMb(child?.pid));
      while ((await lag()) > 4) {
        ingestPeak = Math.max(ingestPeak, rssMb(child?.pid));
        await sleep(50);
      }
    }
    while ((await lag()) > 0) await sleep(100);
    const [{ n, bytes }] = await sql<
      { n: number; bytes: number }[]
    >`select count(*)::int as n, sum(octet_length(payload::text))::float8 as bytes from traces where session_id = 'huge-1'`;
    console.log(
      `big session: ${n} traces, ${(Number(bytes) / 1024 / 1024).toFixed(0)} MB of payload JSON written in ${((performance.now() - started) / 1000).toFixed(0)} s (processor RSS peak while ingesting ${ingestPeak.toFixed(0)} MB)`,
    );
    await stopProcessor();

    // 2. A fresh processor matures it while the other tenant keeps sending.
    await startProcessor();
    const sent = new Map<string, number>();
    let otherSeq = 0;
    let offering = true;
    const offer = (async () => {
      while (offering) {
        const id = `other-${++otherSeq}`;
        sent.set(id, Date.now());
        await publish(other.tenantId, "chat-bot", {
          provider: "openai",
          service_name: "chat-bot",
          session_id: `o-${otherSeq % 50}`,
          trace_id: id,
          start_time: new Date().toISOString(),
          end_time: new Date().toISOString(),
          request: { model: "gpt-4o-mini", messages: [{ role: "user", content: `hello ${otherSeq}` }] },
          responses: [
            {
              id: `ro-${otherSeq}`,
              object: "chat.completion",
              model: "gpt-4o-mini",
              choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
              usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
            },
          ],
        });
        await sleep(1000 / OTHER_RATE);
      }
    })();
    const samples: Array<{ at: number; rss: number }> = [];
    const sampler = setInterval(() => samples.push({ at: Date.now(), rss: rssMb(child?.pid) }), 100);
    let maturedAt = 0;
    const deadline = Date.now() + 30 * 60_000;
    while (Date.now() < deadline) {
      const [s] = await sql<
        { status: string; matured_at: Date | null }[]
      >`select status, matured_at from sessions where session_id = 'huge-1'`;
      if (s?.status === "matured") {
        // matured_at is the transaction's start (Postgres now()); the commit is when we see it.
        maturedAt = Date.now();
        break;
      }
      await sleep(250);
    }
    await sleep(2_000);
    offering = false;
    await offer;
    clearInterval(sampler);
    while ((await lag()) > 0) await sleep(100);
    // The marker fires a window after the last write: before that is the floor, after it the maturation.
    const [{ last }] = await sql<
      { last: Date }[]
    >`select last_ingested_at as last from sessions where session_id = 'huge-1'`;
    const markerAt = new Date(last).getTime() + WINDOW * 1000;
    const rows = await sql<
      { trace_id: string; ingested_at: Date }[]
    >`select trace_id, ingested_at from traces where trace_id like 'other-%'`;
    const before: number[] = [];
    const during: number[] = [];
    for (const r of rows) {
      const at = sent.get(r.trace_id)!;
      const l = new Date(r.ingested_at).getTime() - at;
      if (at < markerAt) before.push(l);
      else if (at <= maturedAt) during.push(l);
    }
    const rssBefore = Math.max(0, ...samples.filter((s) => s.at < markerAt).map((s) => s.rss));
    const rssDuring = Math.max(0, ...samples.filter((s) => s.at >= markerAt).map((s) => s.rss));
    const [a] = await sql<{ item_count: number; truncated: boolean; model_calls: number; total_tokens: number }[]>`
      select item_count, truncated, model_calls, total_tokens from session_analyses a join sessions s on s.id = a.session_pk where s.session_id = 'huge-1'`;
    console.log(
      `maturation: committed ${maturedAt ? ((maturedAt - markerAt) / 1000).toFixed(1) : "(did not finish)"} s after the marker was due (±0.3 s); transcript ${a?.item_count} items (truncated ${a?.truncated}), ${a?.model_calls} model calls, ${a?.total_tokens} tokens`,
    );
    console.log(
      `processor RSS: floor (running, before the marker) ${rssBefore.toFixed(0)} MB; peak while maturing ${rssDuring.toFixed(0)} MB`,
    );
    console.log(
      `other tenant ingest lag (publish -> row in Postgres), ${OTHER_RATE}/s: floor before the marker p50 ${pct(before, 50)} ms p99 ${pct(before, 99)} ms (n=${before.length}); while maturing p50 ${pct(during, 50)} ms p99 ${pct(during, 99)} ms max ${Math.max(0, ...during)} ms (n=${during.length})`,
    );
    await nc.drain();
    await stopProcessor();
  });
}

await main();
