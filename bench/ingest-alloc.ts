/**
 * What the ingest host allocates per request, door by door, and the GC pauses that follow (issue 41
 * part 4: V's slow answers during a flood overlap ingest's collections). Ingest runs as its own
 * process (bench/lib/harness.ts) with JSC's GC log on (BUN_JSC_logGC=1) and a preload that forces
 * a full collection on a signal (bench/ingest-alloc/gc-mark.ts); each door's requests run between
 * two such marks, and the log's heap sizes give the bytes allocated between them
 * (bench/ingest-alloc/gc-log.ts). Printed per door: KB allocated per request, collections and pause
 * ms per 1,000 requests, beside two floors measured in the same run: GET /health on the same
 * process (Elysia's and Bun's per-request cost), and a bare Bun.serve (same preload and log) that
 * reads the same request bodies and answers 200 (what receiving the bytes costs at all).
 *
 *   flock /work/wt/bench.lock timeout 900 node_modules/.bin/bun run bench/ingest-alloc.ts [--scale 1]
 *
 * `--scale` multiplies every door's request count (default 1: about 40 s of requests in all). A
 * phase's figure misses the strings of cycles a timer (not allocation) ended (gc-log.ts: a lower
 * bound, up to ~30% apart between runs of the same code), so every phase runs to as many
 * collections as a lock turn allows (60 batch bodies of 1,000 items, 80 OTLP requests of 500
 * spans, 3,000 small requests); compare runs, not one run's 10%.
 * The 429 door runs on a second ingest whose credential's bucket is empty (every request refused).
 * `--only` runs a comma-separated subset of the doors (names as printed).
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { bytesMethod, TRACE_EXPORT } from "../apps/ingest/src/otlp/grpc/server";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { createGcLogReader, type GcPhase, onLines } from "./ingest-alloc/gc-log";
import { batchBody, fresh, HEX, otlpProtobuf, otlpTemplate, trace } from "./flood/bodies";
import { type Bench, type BenchApp, runBench } from "./lib/harness";

if (process.argv[2] === "--bare") {
  // The floor: a server that reads the body and answers what ingest answers, nothing else.
  const ok = JSON.stringify({ status: "success" });
  Bun.serve({
    port: Number(process.argv[3]),
    maxRequestBodySize: 1024 ** 3,
    async fetch(request) {
      if (request.method === "POST") await request.arrayBuffer();
      return new Response(ok, { headers: { "content-type": "application/json" } });
    },
  });
  process.on("SIGTERM", () => process.exit(0));
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: { scale: { type: "string", default: "1" }, only: { type: "string" } },
});
const SCALE = Number(args.scale);

interface Door {
  name: string;
  /** Requests in the phase. */
  count: number;
  concurrency: number;
  /** What a 200 (or, for `expect`, that status) is for this door. */
  expect?: number;
  /** Bodies built before the phase (not measured: they are the client's). */
  build(key: string): Array<() => Promise<number>>;
  /** Bytes of one body on the wire. */
  wire?: number;
  /** The bare floor sends the same bodies (not gRPC, not the refusing host's). */
  bare: boolean;
  /** Runs on the refusing ingest (bucket empty). */
  refusing?: boolean;
}

const GrpcClient = grpc.makeGenericClientConstructor(
  { Export: bytesMethod(TRACE_EXPORT) } as unknown as grpc.ServiceDefinition,
  "TraceService",
);

function doors(base: () => string, grpcAddress: () => string): Door[] {
  const post = (path: string, headers: Record<string, string>, body: BodyInit) => async () => {
    const res = await fetch(`${base()}${path}`, { method: "POST", headers, body });
    await res.arrayBuffer();
    return res.status;
  };
  const json = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });
  /** One score in its own session (the admitted door and its 429s send the same). */
  const scorePost = (key: string) =>
    post(
      "/raw/scores",
      json(key),
      JSON.stringify({ service_name: "alloc-svc", session_id: `s-${fresh()}`, name: "thumbs", value: 1 }),
    );
  const template = otlpTemplate(500);
  const n = (count: number) => Math.max(1, Math.round(count * SCALE));
  const list: Door[] = [
    {
      name: "GET /health (floor)",
      count: n(3000),
      concurrency: 8,
      bare: true,
      build: () =>
        Array.from({ length: n(3000) }, () => async () => {
          const res = await fetch(`${base()}/health`);
          await res.arrayBuffer();
          return res.status;
        }),
    },
    {
      name: "/raw/traces",
      count: n(3000),
      concurrency: 8,
      bare: true,
      build: (key) =>
        Array.from({ length: n(3000) }, (_, i) =>
          post("/raw/traces", json(key), trace("alloc-svc", `s-${fresh()}`, i)),
        ),
    },
    {
      name: "/raw/scores",
      count: n(3000),
      concurrency: 8,
      bare: true,
      build: (key) => Array.from({ length: n(3000) }, () => scorePost(key)),
    },
    {
      name: "/raw/batch 1,000 (gzip)",
      count: n(60),
      concurrency: 2,
      bare: true,
      build: (key) =>
        Array.from({ length: n(60) }, () =>
          post("/raw/batch", { ...json(key), "content-encoding": "gzip" }, batchBody(1000, fresh()) as BodyInit),
        ),
    },
    {
      name: "OTLP/HTTP JSON 500 spans",
      count: n(80),
      concurrency: 2,
      bare: true,
      build: (key) =>
        Array.from({ length: n(80) }, () => post("/v1/traces", json(key), template.replaceAll(HEX, fresh()))),
    },
    {
      name: "OTLP/HTTP protobuf 500 spans",
      count: n(80),
      concurrency: 2,
      bare: true,
      build: (key) =>
        Array.from({ length: n(80) }, () =>
          post(
            "/v1/traces",
            { authorization: `Bearer ${key}`, "content-type": "application/x-protobuf" },
            otlpProtobuf(template, fresh()) as BodyInit,
          ),
        ),
    },
    {
      name: "OTLP/gRPC 500 spans",
      count: n(80),
      concurrency: 2,
      bare: false,
      build: (key) => {
        let client:
          | (grpc.Client & {
              Export: (m: Buffer, md: grpc.Metadata, done: (e: grpc.ServiceError | null) => void) => void;
            })
          | undefined;
        return Array.from({ length: n(80) }, () => {
          const message = otlpProtobuf(template, fresh());
          return () => {
            client ??= new GrpcClient(grpcAddress(), grpc.credentials.createInsecure(), {
              "grpc.max_send_message_length": 16 * 1024 * 1024,
            }) as never;
            const metadata = new grpc.Metadata();
            metadata.set("authorization", `Bearer ${key}`);
            return new Promise<number>((resolve) =>
              client!.Export(message, metadata, (err) => resolve(err ? 1000 + err.code : 200)),
            );
          };
        });
      },
    },
    {
      name: "429 /raw/scores",
      count: n(3000),
      concurrency: 8,
      expect: 429,
      refusing: true,
      bare: false,
      build: (key) => Array.from({ length: n(3000) }, () => scorePost(key)),
    },
    {
      name: "429 OTLP/HTTP JSON 500 spans",
      count: n(400),
      concurrency: 4,
      expect: 429,
      refusing: true,
      bare: false,
      build: (key) =>
        Array.from({ length: n(400) }, () => post("/v1/traces", json(key), template.replaceAll(HEX, fresh()))),
    },
  ];
  const only = args.only?.split(",");
  return only ? list.filter((d) => d.name === list[0].name || only.some((o) => d.name.includes(o))) : list;
}

/** A process under measurement: its GC log read line by line, a mark on demand. */
function watched(child: BenchApp["child"]) {
  const reader = createGcLogReader();
  let pending: ((p: GcPhase) => void) | undefined;
  onLines(child.stderr!, (l) => {
    const closed = reader.line(l);
    if (closed && pending) {
      pending(closed);
      pending = undefined;
    } else if (
      !l.startsWith("[GC") &&
      !l.startsWith("Requesting GC") &&
      !l.startsWith("GC END") &&
      !l.startsWith("ALLOC-")
    )
      process.stderr.write(`${l}\n`);
  });
  return {
    mark(): Promise<GcPhase> {
      return new Promise((resolve) => {
        pending = resolve;
        child.kill("SIGUSR2");
      });
    },
  };
}

async function runPhase(requests: Array<() => Promise<number>>, concurrency: number, expect: number) {
  let next = 0;
  let wrong = 0;
  let firstWrong = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const status = await requests[next++]();
        if (status !== expect) {
          wrong++;
          firstWrong ||= status;
        }
      }
    }),
  );
  if (wrong) throw new Error(`${wrong} answers were not ${expect} (first: ${firstWrong})`);
}

const GC_ENV = { BUN_JSC_logGC: "1" };
const PRELOAD = ["--preload", "./bench/ingest-alloc/gc-mark.ts"];
const OTHER_PORTS = { PLATFORM_PORT: "0", PROCESSOR_PORT: "0", DISPATCHER_PORT: "0" };

async function measure(
  bench: Bench,
  host: { base: string; mark: () => Promise<GcPhase> },
  list: Door[],
  key: string,
): Promise<Map<string, GcPhase & { count: number }>> {
  const out = new Map<string, GcPhase & { count: number }>();
  await host.mark();
  for (const d of list) {
    const requests = d.build(key);
    // Warm-up (JIT, connections), then a mark so the phase starts from a collected heap.
    await runPhase(d.build(key).slice(0, Math.min(20, d.count)), d.concurrency, d.expect ?? 200).catch(() => {});
    await host.mark();
    await runPhase(requests, d.concurrency, d.expect ?? 200);
    out.set(d.name, { ...(await host.mark()), count: requests.length });
  }
  void bench;
  return out;
}

await runBench("ingest-alloc", { nats: true, poolMax: 2 }, async (bench) => {
  const tenant = await bench.tenant({ name: "alloc", email: "a@alloc.test" });
  const grpcPort = await freePort();
  const env = {
    ...GC_ENV,
    INGEST_RATE_LIMIT_PER_SECOND: "0",
    INGEST_MAX_BODY_BYTES: String(4 * 1024 * 1024),
    INGEST_GRPC_PORT: String(grpcPort),
  };
  // Spawned here rather than with bench.spawnApp: the GC log is read from the first line (a full
  // stderr pipe would stall the app's start).
  const spawn = async (name: string, extra: Record<string, string>, argv?: string[]) => {
    const port = await freePort();
    const child = bench.spawnScript(argv ? [...argv, String(port)] : ["apps/ingest/src/main.ts"], {
      env: { ...GC_ENV, ...extra, ...(argv ? {} : { ...env, ...extra, INGEST_PORT: String(port), ...OTHER_PORTS }) },
      bunFlags: PRELOAD,
      stdio: ["ignore", "ignore", "pipe"],
    });
    const host = { name, base: `http://127.0.0.1:${port}`, ...watched(child) };
    await waitForPort(port, 60_000);
    return host;
  };
  const hosts = [
    await spawn("ingest", {}),
    await spawn("refusing", {
      INGEST_GRPC_PORT: "off",
      INGEST_RATE_LIMIT_PER_SECOND: "0.001",
      INGEST_RATE_LIMIT_BURST: "1",
      INGEST_RATE_LIMIT_PACING_MS: "0",
    }),
    await spawn("bare", {}, ["bench/ingest-alloc.ts", "--bare"]),
  ];
  let base = "";
  const list = doors(
    () => base,
    () => `127.0.0.1:${grpcPort}`,
  );
  const load0 = loadavg()[0];
  // The refusing host's one token goes first.
  base = hosts[1].base;
  await fetch(`${base}/raw/scores`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify({ service_name: "alloc-svc", session_id: "s-first", name: "thumbs", value: 1 }),
  });
  const results: Record<string, Map<string, GcPhase & { count: number }>> = {};
  for (const host of hosts) {
    const name = host.name;
    base = host.base;
    const mine = list.filter(
      (d) => d.name === list[0].name || (name === "bare" ? d.bare : name === "refusing" ? d.refusing : !d.refusing),
    );
    results[name] = await measure(bench, host, mine, tenant.telemetryKey);
  }
  const kb = (b: number) => (b / 1024).toFixed(1);
  const per1k = (x: number, count: number) => ((1000 * x) / count).toFixed(1);
  console.log(
    `ingest allocation per request (KB), collections and GC pause per 1,000 requests; load ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}`,
  );
  for (const d of list) {
    const host = d.refusing ? "refusing" : "ingest";
    const r = results[host].get(d.name)!;
    const floor = results[host].get(list[0].name)!;
    const bare = results.bare.get(d.name);
    console.log(
      `  ${d.name.padEnd(30)} ${String(r.count).padStart(5)} req: ${kb(r.allocated / r.count).padStart(8)} KB/req` +
        ` (${(r.allocated / r.count / (floor.allocated / floor.count)).toFixed(1)}x GET /health ${kb(floor.allocated / floor.count)}` +
        `${bare ? `; bare Bun.serve same bodies ${kb(bare.allocated / bare.count)}` : ""})` +
        `; ${per1k(r.collections, r.count)} GCs, pause ${per1k(r.pauseMs, r.count)} ms per 1,000 (worst ${r.worstPauseMs.toFixed(1)} ms)`,
    );
  }
  console.log(
    `  load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
});
