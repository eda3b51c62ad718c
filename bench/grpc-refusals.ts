/**
 * What ingest spends per refused OTLP/gRPC call (issue 41 part 4: the gRPC door's cost to the other
 * tenant under a flood). A credential whose bucket is empty after its first call (0.001/s, burst
 * 1; 429s unpaced, so this measures a refusal's cost, not how often one is sent) is hammered from
 * `--connections` concurrent Export calls on one channel (as bench/flood's gRPC flooder does) with
 * messages of 1 KB and of a 500-span export (~268 KB). Per refused call: ingest's CPU (/proc, every
 * thread) and the bytes the client put on the wire (its connection's TCP bytes_acked, from `ss`:
 * what of a refused message was still sent and read). The floor, same run and same process: an OTLP/HTTP
 * /v1/traces 429 of a 1 KB body (refused from its headers by Bun.serve).
 *
 * `--before <checkout>` also runs the same against an ingest started from another checkout (e.g.
 * /work/main), alternating with this tree's, so a change is compared within one run.
 *
 * `--paced`: refusals paced as deployed (pacing.ts: each held until its Retry-After, at most 1 s),
 * so a refused call's client sends what HTTP/2's flow-control windows allow of its message while
 * it waits; ingest's idle CPU, measured first, is subtracted. Without it, 429s are answered at
 * once, mostly before the message is sent.
 *
 *   bun run bench/grpc-refusals.ts [--seconds 4] [--connections 32] [--rounds 2] [--before <dir>] [--paced]
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { bytesMethod, TRACE_EXPORT } from "../apps/ingest/src/otlp/grpc/server";
import { freePort } from "../scripts/infra/ports";
import { otlpBodies } from "./flood/bodies";
import { type BenchApp, runBench } from "./lib/harness";
import { procStat } from "./lib/proc";

interface ClientConfig {
  door: "grpc" | "http";
  target: string;
  key: string;
  spans: number;
  seconds: number;
  connections: number;
}
interface ClientResult {
  refused: number;
  other: number;
  bytes: number;
  /** Bytes the client's connection put on the wire (TCP's bytes_acked, from `ss`), gRPC only. */
  sent?: number;
}

/** bytes_acked of this process's established TCP connections to `target` (host:port), from `ss -ti`. */
function bytesSentTo(target: string): number {
  const out = spawnSync("ss", ["-tinH", "state", "established", "dst", target], { encoding: "utf8" }).stdout ?? "";
  return [...out.matchAll(/bytes_acked:(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
}

const GrpcClient = grpc.makeGenericClientConstructor(
  { Export: bytesMethod(TRACE_EXPORT) } as unknown as grpc.ServiceDefinition,
  "TraceService",
);

/** `connections` loops refused as fast as ingest answers, for `seconds`. */
async function refusals(cfg: ClientConfig): Promise<ClientResult> {
  const body = otlpBodies(cfg.spans, 1, cfg.door === "grpc" ? "protobuf" : "json")[0].bytes;
  let refused = 0;
  let other = 0;
  const end = performance.now() + cfg.seconds * 1000;
  if (cfg.door === "http") {
    const headers = { authorization: `Bearer ${cfg.key}`, "content-type": "application/json" };
    await Promise.all(
      Array.from({ length: cfg.connections }, async () => {
        while (performance.now() < end) {
          const res = await fetch(cfg.target, { method: "POST", headers, body });
          await res.arrayBuffer();
          if (res.status === 429) refused++;
          else other++;
        }
      }),
    );
    return { refused, other, bytes: body.length };
  }
  const client = new GrpcClient(cfg.target, grpc.credentials.createInsecure(), {
    "grpc.max_send_message_length": 16 * 1024 * 1024,
  }) as unknown as grpc.Client & {
    Export: (message: Buffer, metadata: grpc.Metadata, done: (err: grpc.ServiceError | null) => void) => void;
  };
  await Promise.all(
    Array.from({ length: cfg.connections }, async () => {
      while (performance.now() < end) {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${cfg.key}`);
        const code = await new Promise<number>((resolve) =>
          client.Export(body as Buffer, metadata, (err) => resolve(err ? err.code : 0)),
        );
        if (code === grpc.status.RESOURCE_EXHAUSTED) refused++;
        else other++;
      }
    }),
  );
  const sent = bytesSentTo(cfg.target);
  client.close();
  return { refused, other, bytes: body.length, sent };
}

if (process.argv[2] === "--client") {
  const result = await refusals(JSON.parse(process.argv[3]) as ClientConfig);
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    connections: { type: "string", default: "32" },
    rounds: { type: "string", default: "2" },
    before: { type: "string" },
    paced: { type: "boolean", default: false },
  },
});
/**
 * Paced (pacing.ts, as deployed): a refusal is held up to a second before it is sent, and
 * meanwhile the client sends what HTTP/2's windows let it of the message. Unpaced, a refusal is
 * answered at once, before most of the message was sent.
 */
const PACED = args.paced!;

await runBench("grpc-refusals", { nats: true }, async (bench) => {
  const tenant = await bench.tenant({ name: "f" });
  const env = {
    INGEST_RATE_LIMIT_PER_SECOND: "0.001",
    INGEST_RATE_LIMIT_BURST: "1",
    ...(PACED ? {} : { INGEST_RATE_LIMIT_PACING_MS: "0" }),
    INGEST_MAX_BODY_BYTES: String(4 * 1024 * 1024),
  };
  const trees: Array<{ name: string; cwd?: string }> = [{ name: "this tree" }];
  if (args.before) trees.push({ name: `before (${args.before})`, cwd: args.before });
  const ingests: Array<{ name: string; app: BenchApp; grpcPort: number; idle: number }> = [];
  for (const t of trees) {
    const grpcPort = await freePort();
    const app = await bench.spawnApp("ingest", { env: { ...env, INGEST_GRPC_PORT: String(grpcPort) }, cwd: t.cwd });
    ingests.push({ name: t.name, app, grpcPort, idle: 0 });
  }
  /** CPU seconds per second ingest spends with nothing to do, over `seconds`. */
  const idleRate = async (pid: number, seconds: number) => {
    const c0 = procStat(pid)!.own;
    await Bun.sleep(seconds * 1000);
    return (procStat(pid)!.own - c0) / seconds;
  };
  const run = async (target: (typeof ingests)[number], door: ClientConfig["door"], spans: number) => {
    const pid = target.app.child.pid!;
    const cfg: ClientConfig = {
      door,
      target: door === "grpc" ? `127.0.0.1:${target.grpcPort}` : `http://127.0.0.1:${target.app.port}/v1/traces`,
      key: tenant.telemetryKey,
      spans,
      seconds: Number(args.seconds),
      connections: Number(args.connections),
    };
    const child = bench.spawnScript(["bench/grpc-refusals.ts", "--client", JSON.stringify(cfg)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout!.on("data", (c) => (out += c));
    const cpu0 = procStat(pid)!.own;
    const t0 = performance.now();
    await new Promise((resolve) => child.once("close", resolve));
    // Net of what ingest spends idle (its timers, NATS heartbeats): it weighs when refusals are paced.
    const cpu = procStat(pid)!.own - cpu0 - (target.idle * (performance.now() - t0)) / 1000;
    const r = JSON.parse(out.trim().split("\n").at(-1)!) as ClientResult;
    const n = Math.max(1, r.refused);
    return { us: (cpu * 1e6) / n, kbSent: r.sent === undefined ? Number.NaN : r.sent / n / 1024, ...r };
  };
  // The first call of each door takes the bucket's one token: spent before measuring.
  for (const t of ingests) for (const door of ["grpc", "http"] as const) await run({ ...t }, door, 1);
  await Bun.sleep(1000);
  for (const t of ingests) t.idle = await idleRate(t.app.child.pid!, Number(args.seconds));

  console.log(
    `grpc-refusals (${args.seconds} s each, ${args.connections} concurrent calls, bucket empty, 429s ${PACED ? "paced (held up to 1 s)" : "unpaced"}; ingest idle: ${ingests.map((t) => `${(100 * t.idle).toFixed(1)}%`).join(", ")} of a core, subtracted)`,
  );
  for (let round = 1; round <= Number(args.rounds); round++)
    for (const t of ingests) {
      const load = loadavg()[0].toFixed(1);
      const floor = await run(t, "http", 1);
      const small = await run(t, "grpc", 1);
      const large = await run(t, "grpc", 500);
      const show = (r: Awaited<ReturnType<typeof run>>) =>
        `${Math.round(r.us)} us CPU${Number.isNaN(r.kbSent) ? "" : `, ${r.kbSent.toFixed(0)} KB on the wire`} per refusal (${r.refused} refused, ${r.other} other; message ${(r.bytes / 1024).toFixed(0)} KB)`;
      console.log(`  round ${round}, ${t.name} (load ${load}):`);
      console.log(`    floor, OTLP/HTTP 429: ${show(floor)}`);
      console.log(`    gRPC, 1-span message: ${show(small)}; ${(small.us / floor.us).toFixed(2)}x the floor`);
      console.log(`    gRPC, 500-span message: ${show(large)}; ${(large.us / floor.us).toFixed(2)}x the floor`);
    }
  console.log(
    `  load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
});
