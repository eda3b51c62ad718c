/**
 * What a small INGEST publish's PubAck waits behind when another connection publishes large ones
 * (issue 41 part 4: is the other tenant's tail the INGEST stream storing a flooder's ~600 KB
 * messages?). A real nats-server with the deployed settings (deploy/nats/server.conf), a fresh one
 * per layout, file storage; every stream is declared as the catalogue declares INGEST (replicas 1,
 * its duplicate window and max age: shared/nats/catalogue.ts, topology.ts).
 *
 * Connection A (as ingest's `cellar-ingest`) publishes a steady `--small-rate` (50/s) of
 * `--small-bytes` (3 KB) messages on tenant V's lane subject, each with a Nats-Msg-Id and ingest's
 * headers; connection B (as `cellar-ingest-bulk`, the bulk lane) publishes `--large-rate` (1/s)
 * `--large-bytes` (600 KB) messages on tenant F's lane subject, each at a random moment of its
 * period (so the small ones meet them at every phase). Both connections are in this one process,
 * as in ingest. Printed per layout: the small publishes' PubAck latency (publish call to PubAck)
 * p50/p99/max over `--small` of them (2,000), each beside layout (a) of the same run; those called
 * while a large one awaited its PubAck ("behind a large") apart, p50/p90; the large
 * ones' PubAck p50/p99, nats-server's and this process's CPU, and the load average.
 *
 * `--hogs N`: N busy-looping processes at this one's priority through every layout, the floor
 * included (the cores shared as during a flood, where the processor, Postgres and ingest work the
 * admitted items beside nats-server).
 *
 * Layouts (`--layouts`, comma-separated; (a) always runs first, it is the floor; an `a` in the
 * list runs it again there, beside the first, to show how far the floor moved over the run):
 *   a        the small publishes alone
 *   b        both on one stream (different subjects, as the tenant lanes are)
 *   c        the large ones on a second stream of the same config
 *   d        one stream, the large ones without Nats-Msg-Id (the dedupe index's cost)
 *   conn     as b, the large ones on connection A too (ingest before the bulk lane)
 *   mem      as b, the stream in memory storage (the file store's writes excluded)
 *   async    as b, the stream's persist_mode async (PubAck before the write reaches the file)
 *   proc     as b, the large ones published from another process (this event loop excluded)
 *   consume  as b, with a consumer in another process pulling and acking every message (as the
 *            processor does)
 *   gmp1     as b, nats-server run with GOMAXPROCS=1
 *
 *   bun run bench/pubAck-streams.ts [--small 2000] [--small-rate 50] [--large-rate 1]
 *     [--small-bytes 3000] [--large-bytes 600000] [--layouts a,b,c,d]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  AckPolicy,
  jetstream,
  jetstreamManager,
  PersistMode,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { randomBytes, toHex } from "@cellar/shared/crypto";
import { ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import { connectNats, createTopology } from "@cellar/shared/nats/topology";
import { startNatsServer, type RunningNats } from "../scripts/infra/nats-server";
import { stopChild, waitForExit } from "../scripts/infra/processes";
import { pct, procStat } from "./lib/proc";

const { values: args } = parseArgs({
  options: {
    small: { type: "string", default: "2000" },
    "small-rate": { type: "string", default: "50" },
    "large-rate": { type: "string", default: "1" },
    "small-bytes": { type: "string", default: "3000" },
    "large-bytes": { type: "string", default: "600000" },
    layouts: { type: "string", default: "a,b,c,d" },
    hogs: { type: "string", default: "0" },
    // Internal: this file run as a child (`large`: publishes the large ones; `consume`: pulls a stream).
    child: { type: "string" },
    url: { type: "string" },
    subject: { type: "string" },
    stream: { type: "string" },
  },
});

const SMALL = Number(args.small);
const SMALL_RATE = Number(args["small-rate"]);
const LARGE_RATE = Number(args["large-rate"]);
const SMALL_BYTES = Number(args["small-bytes"]);
const LARGE_BYTES = Number(args["large-bytes"]);
const HOGS = Number(args.hogs);
const NS_PER_MS = 1_000_000;
/** Small publishes before each measured stage, not counted (connections and stream warm). */
const WARMUP = 50;

type LayoutName = "a" | "b" | "c" | "d" | "conn" | "mem" | "async" | "proc" | "consume" | "gmp1";
interface Layout {
  name: LayoutName;
  title: string;
  /** No large publishes (the floor). */
  alone?: boolean;
  /** The large ones go to a second stream of the same config. */
  secondStream?: boolean;
  /** The large ones carry no Nats-Msg-Id. */
  noLargeId?: boolean;
  storage?: StorageType;
  /** The stream's persist_mode (nats-server 2.12+; INGEST has the default). */
  persist?: PersistMode;
  largeInChild?: boolean;
  /** The large ones on connection A too (ingest before the bulk lane). */
  sameConnection?: boolean;
  consumer?: boolean;
  serverEnv?: Record<string, string>;
}
const LAYOUTS: Record<LayoutName, Layout> = {
  a: { name: "a", title: "small ones alone (floor)", alone: true },
  b: { name: "b", title: "one stream, both" },
  c: { name: "c", title: "large on a second stream", secondStream: true },
  d: { name: "d", title: "one stream, large without Msg-Id", noLargeId: true },
  conn: { name: "conn", title: "one stream, large on connection A too", sameConnection: true },
  mem: { name: "mem", title: "one stream, memory storage", storage: StorageType.Memory },
  async: { name: "async", title: "one stream, persist_mode async", persist: PersistMode.Async },
  proc: { name: "proc", title: "one stream, large from another process", largeInChild: true },
  consume: { name: "consume", title: "one stream, a consumer acking all", consumer: true },
  gmp1: { name: "gmp1", title: "one stream, server GOMAXPROCS=1", serverEnv: { GOMAXPROCS: "1" } },
};

/** The INGEST stream's configuration as ensureTopology declares it (topology.ts), under another name. */
function ingestLikeConfig(name: string, subjects: string[], layout: Layout): Partial<StreamConfig> & { name: string } {
  return {
    name,
    subjects,
    num_replicas: 1,
    storage: layout.storage ?? StorageType.File,
    ...(layout.persist ? { persist_mode: layout.persist } : {}),
    duplicate_window: ingestStream.duplicateWindowMs! * NS_PER_MS,
    max_age: ingestStream.maxAgeMs! * NS_PER_MS,
  };
}

/** A publish: when it was called (ms since the epoch, comparable across processes) and its PubAck latency. */
interface Timed {
  at: number;
  ms: number;
}
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - performance.now())));
const messageId = () => toHex(randomBytes(32));
/** A body of `bytes` bytes, distinct per call (a counter up front); its content does not matter to the store. */
function bodyOf(bytes: number, filler: Uint8Array, n: number): Uint8Array {
  const out = filler.slice(0, bytes);
  out.set(new TextEncoder().encode(`{"n":${n},"pad":"`));
  return out;
}
const FILLER = new TextEncoder().encode("x".repeat(Math.max(SMALL_BYTES, LARGE_BYTES)));
const cpuMs = (pid: number | undefined) => {
  const s = pid ? procStat(pid) : null;
  return s ? s.own * 1000 : 0; // procStat: utime + stime in seconds
};

/**
 * Publishes `--large-rate` large messages a second on `js` until `stop()`, each at a random moment
 * of its period; resolves to their PubAck latencies (ms) once the last is acknowledged.
 */
function largePublisher(nc: NatsConnection, subject: string, withId: boolean) {
  const js = jetstream(nc, { checkAPI: false });
  const period = 1000 / LARGE_RATE;
  const acks: Timed[] = [];
  const pending: Promise<unknown>[] = [];
  let stopped = false;
  const done = (async () => {
    for (let k = 0, start = performance.now(); !stopped; k++) {
      await sleepUntil(start + k * period + Math.random() * period);
      if (stopped) break;
      const data = bodyOf(LARGE_BYTES, FILLER, k);
      const t0 = performance.now();
      pending.push(
        js
          .publish(subject, data, { headers: ingestCheckedHeaders("otlp"), ...(withId ? { msgID: messageId() } : {}) })
          .then(() => acks.push({ at: performance.timeOrigin + t0, ms: performance.now() - t0 })),
      );
      await sleepUntil(start + (k + 1) * period);
    }
    await Promise.all(pending);
    return acks;
  })();
  return {
    stop: () => {
      stopped = true;
      return done;
    },
  };
}

/** `count` small publishes at `--small-rate`, each timed publish call to PubAck (ms). */
async function smallPublishes(nc: NatsConnection, subject: string, count: number): Promise<Timed[]> {
  const js = jetstream(nc, { checkAPI: false });
  const period = 1000 / SMALL_RATE;
  const lat: Timed[] = [];
  const pending: Promise<unknown>[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    await sleepUntil(start + i * period);
    const t0 = performance.now();
    pending.push(
      js
        .publish(subject, bodyOf(SMALL_BYTES, FILLER, i), { msgID: messageId(), headers: ingestCheckedHeaders("raw") })
        .then(() => lat.push({ at: performance.timeOrigin + t0, ms: performance.now() - t0 })),
    );
  }
  await Promise.all(pending);
  return lat;
}

interface StageResult {
  layout: Layout;
  small: Timed[];
  large: Timed[];
  serverCpuPct: number;
  clientCpuPct: number;
  load: number;
}

/** This file as a child (`--child ...`); its stdin closing is its signal to stop. */
function spawnSelf(argv: string[]): ChildProcess {
  return spawn(process.execPath, [import.meta.path, ...argv], { stdio: ["pipe", "pipe", "inherit"] });
}

/** Resolves once the child printed `ready` (connected, started), with a promise of the rest of its output. */
function childReady(child: ChildProcess): Promise<{ output: Promise<string> }> {
  let out = "";
  return new Promise((resolve, reject) => {
    const exited = waitForExit(child).then(() => out);
    child.stdout!.on("data", (d) => {
      const first = !out.includes("\n");
      out += d;
      if (first && out.includes("\n")) {
        if (out.startsWith("ready\n")) resolve({ output: exited.then(() => out.slice("ready\n".length)) });
        else reject(new Error(`child: ${out}`));
      }
    });
    void exited.then(() => reject(new Error(`child exited before ready: ${out}`)));
  });
}

async function runLayout(layout: Layout, live: Set<() => Promise<void>>): Promise<StageResult> {
  const dir = mkdtempSync(join(tmpdir(), `cellar-bench-pubAck-${layout.name}-`));
  let nats: RunningNats | undefined;
  const children: ChildProcess[] = [];
  const conns: NatsConnection[] = [];
  const cleanup = async () => {
    await Promise.allSettled(children.map((c) => stopChild(c, 3_000)));
    await Promise.allSettled(conns.map((c) => c.close()));
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  live.add(cleanup);
  try {
    nats = await startNatsServer({ storeDir: join(dir, "nats"), quiet: true, env: layout.serverEnv });
    const t = createTopology("bench");
    const a = await connectNats(nats.url, "cellar-ingest", { noAsyncTraces: true });
    const b = await connectNats(nats.url, "cellar-ingest-bulk", { noAsyncTraces: true });
    conns.push(a, b);
    const jsm = await jetstreamManager(a);
    await jsm.streams.add(ingestLikeConfig(t.ingestStream, ingestStream.subjects!(t), layout));
    let largeSubject = ingestStream.subjectOf!(t, { kind: "batch", tenantId: "tenant-F" } as never);
    if (layout.secondStream) {
      await jsm.streams.add(ingestLikeConfig(`${t.ingestStream}_BULK`, [`${t.subjectPrefix}ingestbulk.>`], layout));
      largeSubject = `${t.subjectPrefix}ingestbulk.batch`;
    }
    const smallSubject = ingestStream.subjectOf!(t, { kind: "trace", tenantId: "tenant-V" } as never);
    if (layout.consumer) {
      await jsm.consumers.add(t.ingestStream, { durable_name: "bench", ack_policy: AckPolicy.Explicit });
      const child = spawnSelf(["--child", "consume", "--url", nats.url, "--stream", t.ingestStream]);
      children.push(child);
      await childReady(child);
    }
    let large: { stop(): Promise<Timed[]> } | undefined;
    if (!layout.alone && layout.largeInChild) {
      const child = spawnSelf([
        ...["--child", "large", "--url", nats.url, "--subject", largeSubject],
        ...["--large-rate", String(LARGE_RATE), "--large-bytes", String(LARGE_BYTES)],
      ]);
      children.push(child);
      const { output } = await childReady(child);
      large = {
        stop: async () => {
          child.stdin!.end();
          return JSON.parse(await output) as Timed[];
        },
      };
    } else if (!layout.alone) {
      large = largePublisher(layout.sameConnection ? a : b, largeSubject, !layout.noLargeId);
    }
    for (let i = 0; i < HOGS; i++) children.push(spawnSelf(["--child", "hog"]));
    await smallPublishes(a, smallSubject, WARMUP);
    const server0 = cpuMs(nats.process.pid);
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const small = await smallPublishes(a, smallSubject, SMALL);
    const wall = performance.now() - t0;
    const self = process.cpuUsage(self0);
    const serverCpuPct = ((cpuMs(nats.process.pid) - server0) / wall) * 100;
    const measuredFrom = performance.timeOrigin + t0;
    const largeAcks = ((await large?.stop()) ?? []).filter((x) => x.at >= measuredFrom);
    return {
      layout,
      small,
      large: largeAcks,
      serverCpuPct,
      clientCpuPct: ((self.user + self.system) / 1000 / wall) * 100,
      load: loadavg()[0],
    };
  } finally {
    live.delete(cleanup);
    await cleanup();
  }
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);

function report(r: StageResult, floor: StageResult | undefined): string {
  const s = sorted(r.small.map((x) => x.ms));
  const l = sorted(r.large.map((x) => x.ms));
  const f = floor ? sorted(floor.small.map((x) => x.ms)) : undefined;
  // The small publishes called while a large one awaited its PubAck: what waiting behind one costs.
  const behind = sorted(
    r.small.filter((x) => r.large.some((y) => x.at >= y.at && x.at <= y.at + y.ms)).map((x) => x.ms),
  );
  const ratio = (p: number) => (f ? ` (${(pct(s, p) / pct(f, p)).toFixed(2)}x)` : "");
  return [
    `(${r.layout.name}) ${r.layout.title}`.padEnd(48),
    `small n=${s.length} p50 ${fmt(pct(s, 50))}${ratio(50)} p99 ${fmt(pct(s, 99))}${ratio(99)} max ${fmt(s[s.length - 1])} ms`,
    l.length ? ` | large n=${l.length} p50 ${fmt(pct(l, 50))} p99 ${fmt(pct(l, 99))} ms` : "",
    l.length
      ? ` | small behind a large n=${behind.length}${behind.length ? ` p50 ${fmt(pct(behind, 50))} p90 ${fmt(pct(behind, 90))}` : ""}`
      : "",
    ` | CPU server ${r.serverCpuPct.toFixed(0)}% client ${r.clientCpuPct.toFixed(0)}% | load ${r.load.toFixed(2)}`,
  ].join("");
}

async function childMain(kind: string): Promise<void> {
  if (kind === "hog") for (;;); // stopped by SIGTERM (stopChild)
  const nc = await connectNats(args.url!, `bench-${kind}`, { noAsyncTraces: true });
  const stdinClosed = new Promise<void>((r) => {
    process.stdin.on("end", () => r()).resume();
  });
  if (kind === "large") {
    const pub = largePublisher(nc, args.subject!, true);
    process.stdout.write("ready\n");
    await stdinClosed;
    const acks = await pub.stop();
    await nc.close();
    process.stdout.write(JSON.stringify(acks));
    return;
  }
  // consume: pull and ack every message of the stream until stopped.
  const js = jetstream(nc);
  const consumer = await js.consumers.get(args.stream!, "bench");
  const messages = await consumer.consume({ max_messages: 256 });
  void stdinClosed.then(() => messages.close());
  process.stdout.write("ready\n");
  for await (const m of messages) m.ack();
  await nc.close();
}

async function main(): Promise<void> {
  const names = args.layouts!.split(",").filter(Boolean) as LayoutName[];
  for (const n of names) if (!LAYOUTS[n]) throw new Error(`unknown layout ${n} (${Object.keys(LAYOUTS).join(", ")})`);
  const order: Layout[] = [LAYOUTS.a, ...(names[0] === "a" ? names.slice(1) : names).map((n) => LAYOUTS[n])];
  const live = new Set<() => Promise<void>>();
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
    process.once(signal, () => {
      console.error(`pubAck-streams: ${signal}; stopping nats-server and children`);
      void Promise.allSettled([...live].map((fn) => fn())).then(() => process.exit(130));
    });
  console.log(
    `pubAck-streams: ${SMALL} small publishes of ${SMALL_BYTES} B at ${SMALL_RATE}/s on connection A; ` +
      `${LARGE_RATE}/s of ${LARGE_BYTES} B on connection B; ${HOGS} CPU hog(s); load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}`,
  );
  let floor: StageResult | undefined;
  for (const layout of order) {
    const r = await runLayout(layout, live);
    console.log(report(r, floor));
    floor ??= r;
  }
}

if (args.child) await childMain(args.child);
else await main();
