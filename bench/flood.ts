/**
 * `npm run bench:flood`: one tenant flooding one door at and beyond its rate limit against
 * another tenant's ordinary traffic (issue 41, "Flood fairness on every door").
 *
 * Apps as separate processes (ingest, processor, dispatcher) over a real nats-server and Postgres.
 * Tenant V sends `--v-rate` single traces per second through /raw/traces, each its own session,
 * alternating two services subscribed to `session.matured` (a local receiver answers 204). Tenant
 * F floods one door from `--connections` connections, ignoring Retry-After, with distinct bodies:
 * OTLP /v1/traces with `--spans`-span requests, the same as protobuf over OTLP/gRPC (32 concurrent
 * Export calls on one channel), /raw/batch with 1,000-item gzipped bodies, or /raw/scores. Each
 * flood stage is compared with a stage of V alone just before it (the floor, same run), and with a
 * stage of F polite between them (`--polite 1`, the default): F at 95% of its limit with the same
 * request shapes and no refusal, so what the flood costs V beyond its admitted items shows apart. Printed per door: V's ingest p50/p99 and maturation lateness p50/p99 (matured_at
 * minus send time plus the window) without and with the flood, their ratios, F's admitted rate
 * against its limit, the CPU each part used over the stage (the apps, nats-server, Postgres, and
 * the two clients, which share this machine's cores: a flood from elsewhere would cost this
 * machine only the ingest side), how long the hops of V's request (ingest, nats-server, V's client)
 * waited for a core (runnable, not running: the kernel's schedstat), and the load average. Then
 * the cost of a refusal: ingest CPU per refused request for 1 KB and 1 MB bodies on /raw/batch
 * (gzip) and OTLP, against a credential whose bucket is empty.
 *
 * `--flooder-nice N` runs the flooding client at that nice level. It shares this machine's two
 * cores with the system it floods, which a flood from elsewhere would not: at 0 (the default) its
 * CPU is taken from the apps, niced it takes only what they leave. Report figures both ways.
 *
 * `--downstream-nice N` runs the processor, the dispatcher and Postgres (every backend forked after
 * the apps start) at that nice level. 10 by default: as shipped, `npm run dev` and
 * docker-compose.yml (cpu_shares 110, nice 10's weight) run them after ingest for a core
 * (docs/deployment.md). `--downstream-nice 0` runs every process at one priority, as a deployment
 * that sets none would: what is left of V's ingest p99 then shows what the flood's admitted items
 * being processed on the same cores cost it.
 *
 * FLOOD_DETAIL=<path prefix> also writes each stage's V requests (sent at, ms) and F's admitted
 * requests (sent, answered) as JSON, to line V's slow answers up with F's admitted bodies.
 * FLOOD_INGEST_BUN_FLAGS="<flags>" passes bun flags to the ingest process alone: `--preload
 * ./bench/flood/lag.ts` with FLOOD_LAG_FILE=<path> logs its event-loop lags (lined up with
 * FLOOD_DETAIL by bench/flood/lag-report.ts), `--cpu-prof --cpu-prof-dir=<dir>` profiles it.
 *
 *   bun run bench/flood.ts [--seconds 15] [--doors otlp,grpc,batch,scores] [--v-rate 50] [--connections 32]
 *                          [--spans 500] [--window 3] [--flooder-nice 0] [--downstream-nice 10]
 */
import { loadavg, setPriority } from "node:os";
import { parseArgs } from "node:util";
import { SecretBox } from "@cellar/shared/crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { activityStream, consumersOf, ingestStream, laneConsumerOf } from "@cellar/shared/nats/catalogue";
import { consumerBacklog } from "@cellar/shared/nats/consume/lanes";
import { connectNats, createTopology } from "@cellar/shared/nats/topology";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { type Bench, runBench } from "./lib/harness";
import {
  cpuByProcess,
  cpuDelta,
  machineCpu,
  pct,
  procStat,
  type RunQueueWait,
  runQueueWait,
  stealShare,
  waitSince,
} from "./lib/proc";
import { seedService, seedWebhookSubscription } from "./lib/seed";
import {
  type FloodConfig,
  type FloodResult,
  runFlooder,
  runRefusals,
  runSender,
  type SenderResult,
} from "./flood/clients";

const mode = process.argv[2];
if (mode === "--receiver") {
  Bun.serve({ port: Number(process.argv[3]), hostname: "127.0.0.1", fetch: () => new Response(null, { status: 204 }) });
  process.on("SIGTERM", () => process.exit(0));
  await new Promise(() => {});
}
// Load generators run in their own processes: V's latencies are not measured behind F's loop.
if (mode === "--sender" || mode === "--flooder" || mode === "--refusals") {
  const cfg = JSON.parse(process.argv[3]);
  const run = mode === "--sender" ? runSender : mode === "--flooder" ? runFlooder : runRefusals;
  // Exit once the line is written: a large one (a scores flood's timings) could be cut short otherwise.
  process.stdout.write(`${JSON.stringify(await run(cfg))}\n`, () => process.exit(0));
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "15" },
    doors: { type: "string", default: "otlp,grpc,batch,scores" },
    "v-rate": { type: "string", default: "50" },
    connections: { type: "string", default: "32" },
    spans: { type: "string", default: "500" },
    window: { type: "string", default: "3" },
    "flooder-nice": { type: "string", default: "0" },
    "downstream-nice": { type: "string", default: "10" },
    polite: { type: "string", default: "1" },
  },
});
const SECONDS = Number(args.seconds);
const DOORS = args.doors!.split(",") as Array<"otlp" | "grpc" | "batch" | "scores">;
const WINDOW_S = Number(args.window);
const LIMIT = { perSecond: 500, burst: 1000 };
/**
 * The polite stage's rate, as a share of the limit: just under it, as a client that keeps to its
 * limit does (at exactly the limit a 1,000-item batch every 2 s meets an empty bucket on any
 * jitter, and half of them were refused).
 */
const POLITE_SHARE = 0.95;
/** From a stage's start to its clients' first request: the flooder builds its bodies meanwhile (~1 s for batch). */
const START_DELAY_MS = 2500;
/**
 * Host steal is sampled in intervals of this length; V's answers that overlap one where the host
 * took more than STEAL_CALM_MAX % of the CPU are left out of the "outside the host's steal" p99
 * (every stage alike, the floor too), printed beside the p99 of every answer.
 */
const STEAL_SAMPLE_MS = 250;
const STEAL_CALM_MAX = 10;

/** Runs a client child to its end and returns the JSON line it prints. */
function client<T>(bench: Bench, flag: string, cfg: unknown, nice = 0): Promise<T> {
  const child = bench.spawnScript(["bench/flood.ts", flag, JSON.stringify(cfg)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (nice) setPriority(child.pid!, nice);
  let out = "";
  child.stdout!.on("data", (c) => (out += c));
  return new Promise((resolve, reject) =>
    // "close", not "exit": the child's stdout may still hold the end of its line when it exits.
    child.once("close", (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split("\n").at(-1)!)) : reject(new Error(`${flag} exited ${code}`)),
    ),
  );
}

await runBench("flood", { nats: true, poolMax: 4 }, async (bench) => {
  const { database } = bench;
  const sql = database.sql;
  const topology = createTopology(""); // the apps' default topology (no prefix)
  // V and F in different INGEST lanes (1 in 16 tenants share F's lane, and its backlog).
  const f = await bench.tenant({ name: "flood", email: "f@flood.test" });
  let v = await bench.tenant({ name: "v", webhooks: true, email: "v@v.test" });
  const lane = (t: string) => laneConsumerOf(ingestStream, topology, t).durable;
  for (let i = 0; i < 50 && lane(v.tenantId) === lane(f.tenantId); i++)
    v = await bench.tenant({ name: `v${i}`, webhooks: true, email: `v${i}@v.test` });

  const receiverPort = await freePort();
  bench.spawnScript(["bench/flood.ts", "--receiver", String(receiverPort)]);
  await waitForPort(receiverPort);
  const secretBox = new SecretBox(bench.appEnv.SECRET_ENCRYPTION_KEY);
  const vServices = ["v-a", "v-b"];
  for (const name of vServices) {
    const svc = await seedService(database.db, v.tenantId, name);
    await seedWebhookSubscription({ sql, secretBox }, v, {
      traceServiceId: svc.id,
      url: `http://127.0.0.1:${receiverPort}/${name}`,
    });
  }

  const env = {
    INGEST_RATE_LIMIT_PER_SECOND: String(LIMIT.perSecond),
    INGEST_RATE_LIMIT_BURST: String(LIMIT.burst),
    MATURATION_WINDOW_SECONDS: String(WINDOW_S),
    ACTIVITY_PUT_INTERVAL_MS: "1000",
    WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8",
    INGEST_MAX_BODY_BYTES: String(4 * 1024 * 1024),
  };
  // Backends forked from now on (the apps' pools) inherit the postmaster's nice level.
  const downstreamNice = Number(args["downstream-nice"]);
  if (downstreamNice) setPriority(bench.pg.pid()!, downstreamNice);
  const grpcPort = await freePort();
  // FLOOD_INGEST_BUN_FLAGS: bun flags for ingest alone (a `--preload` probe, `--cpu-prof`).
  const ingest = await bench.spawnApp("ingest", {
    env: { ...env, INGEST_GRPC_PORT: String(grpcPort) },
    bunFlags: process.env.FLOOD_INGEST_BUN_FLAGS?.split(" ").filter(Boolean),
  });
  const processor = await bench.spawnApp("processor", { env });
  const dispatcher = await bench.spawnApp("dispatcher", { env });
  if (downstreamNice) for (const app of [processor, dispatcher]) setPriority(app.child.pid!, downstreamNice);
  // CPU seconds of each part so far: the apps, nats-server and Postgres (every backend).
  const cpuNow = () =>
    cpuByProcess(
      {
        ingest: [ingest.child.pid],
        processor: [processor.child.pid],
        dispatcher: [dispatcher.child.pid],
        nats: [bench.nats!.process.pid],
        bench: [process.pid],
      },
      bench.pg.pid(),
    );
  // How long ingest and nats-server have waited for a core so far (V's client reports its own).
  const waitsNow = () => ({ ingest: runQueueWait(ingest.child.pid!), nats: runQueueWait(bench.nats!.process.pid!) });
  const base = `http://127.0.0.1:${ingest.port}`;

  // Each stage starts on an idle pipeline: what a flood admitted is written and matured first, so
  // the floor after it measures V alone.
  const nc = await connectNats(bench.nats!.url, "bench-flood");
  const jsm = await jetstreamManager(nc);
  // Bounded: the activity consumer holds early markers (naked for their delay) at any time.
  const settle = async () => {
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const ingestLeft = await consumerBacklog(jsm, ingestStream, topology);
      let markersLeft = 0;
      for (const c of consumersOf(activityStream, topology))
        markersLeft += (await jsm.consumers.info(activityStream.name(topology), c.durable)).num_pending;
      if (ingestLeft + markersLeft === 0) break;
      await Bun.sleep(1000);
    }
    await Bun.sleep((WINDOW_S + 2) * 1000);
  };
  /**
   * Per door: V alone (the floor); F polite, at its limit with the flood's request shapes and no
   * refusal (what its admitted items alone cost V: `--polite 0` skips it); F flooding.
   */
  type Kind = "alone" | "polite" | "flood";
  const KINDS: Kind[] = args.polite === "0" ? ["alone", "flood"] : ["alone", "polite", "flood"];
  type Stage = {
    door: string;
    kind: Kind;
    sender: SenderResult;
    flooder?: FloodResult;
    load: number;
    /** CPU steal (% of the machine's CPU time) over the stage, and per interval [end epoch ms, %]. */
    steal: { stage: number; samples: Array<[number, number]> };
    /** CPU seconds per part over the stage (the clients report their own). */
    cpu: Record<string, number>;
    /** How long each part's threads waited for a core over the stage, and how many times they ran. */
    waits: Record<string, RunQueueWait>;
  };
  const stages: Stage[] = [];
  for (const door of DOORS) {
    for (const kind of KINDS) {
      await settle();
      const prefix = `${door}-${kind}`;
      const load0 = loadavg()[0];
      // Both clients start together once the flooder has built its bodies (the floor waits the same).
      const startAt = Date.now() + START_DELAY_MS;
      const cpu0 = cpuNow();
      const wait0 = waitsNow();
      // The host's steal over the stage, in STEAL_SAMPLE_MS intervals: a VM's cores taken by the
      // host are a tail no process here caused (the floor's as much as the flood's).
      const steal0 = machineCpu();
      const stealSamples: Array<[number, number]> = [];
      let lastSample = steal0;
      const stealSampler = setInterval(() => {
        const now = machineCpu();
        stealSamples.push([Date.now(), stealShare(lastSample, now)]);
        lastSample = now;
      }, STEAL_SAMPLE_MS);
      const [sender, flooder] = await Promise.all([
        client<SenderResult>(bench, "--sender", {
          url: `${base}/raw/traces`,
          key: v.telemetryKey,
          services: vServices,
          rate: Number(args["v-rate"]),
          seconds: SECONDS,
          prefix,
          startAt,
        }),
        kind !== "alone"
          ? client<FloodResult>(
              bench,
              "--flooder",
              {
                base,
                grpc: `127.0.0.1:${grpcPort}`,
                door,
                key: f.telemetryKey,
                seconds: SECONDS,
                connections: Number(args.connections),
                spans: Number(args.spans),
                startAt,
                itemsPerSecond: kind === "polite" ? POLITE_SHARE * LIMIT.perSecond : undefined,
              } satisfies FloodConfig,
              Number(args["flooder-nice"]),
            )
          : undefined,
      ]).finally(() => clearInterval(stealSampler));
      const cpu = { ...cpuDelta(cpu0, cpuNow()), sender: sender.cpu, flooder: flooder?.cpu ?? 0 };
      const steal = { stage: stealShare(steal0, machineCpu()), samples: stealSamples };
      const wait1 = waitsNow();
      const waits = {
        ingest: waitSince(wait0.ingest, wait1.ingest),
        nats: waitSince(wait0.nats, wait1.nats),
        sender: sender.wait,
      };
      stages.push({ door, kind, sender, flooder, load: Math.max(load0, loadavg()[0]), steal, cpu, waits });
      if (process.env.FLOOD_DETAIL)
        await Bun.write(
          `${process.env.FLOOD_DETAIL}-${prefix}.json`,
          JSON.stringify({ timeline: sender.timeline, admitted: flooder?.admitted ?? [] }),
        );
      console.error(`stage ${prefix} done (load ${loadavg()[0].toFixed(1)})`);
    }
  }

  // Every V session matured (or the bound passed): lateness = matured_at - (sent + window).
  const all = stages.flatMap((s) => Object.keys(s.sender.sentAt));
  const deadline = Date.now() + 180_000;
  let matured = new Map<string, number>();
  // When V's session was written (its last_ingested_at): lateness = (written - sent) + (matured - written - window).
  let writtenAt = new Map<string, number>();
  while (Date.now() < deadline) {
    const rows = await sql<{ session_id: string; at: number; written: number }[]>`
      select session_id, extract(epoch from matured_at) * 1000 as at,
        extract(epoch from last_ingested_at) * 1000 as written from sessions
      where tenant_id = ${v.tenantId} and matured_at is not null`;
    matured = new Map(rows.map((r) => [r.session_id, Number(r.at)]));
    writtenAt = new Map(rows.map((r) => [r.session_id, Number(r.written)]));
    if (all.every((s) => matured.has(s))) break;
    await Bun.sleep(1000);
  }

  const ms = (n: number) =>
    Number.isNaN(n) ? "-" : n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");
  const figures = (s: Stage) => {
    const lat = [...s.sender.latencies].sort((a, b) => a - b);
    const late = Object.entries(s.sender.sentAt)
      .filter(([id]) => matured.has(id))
      .map(([id, sent]) => matured.get(id)! - (sent + WINDOW_S * 1000))
      .sort((a, b) => a - b);
    // Where the lateness went: INGEST (sent -> written), then maturation (due -> matured).
    const ids = Object.keys(s.sender.sentAt).filter((id) => matured.has(id));
    const toWrite = ids.map((id) => writtenAt.get(id)! - s.sender.sentAt[id]).sort((a, b) => a - b);
    const afterDue = ids.map((id) => matured.get(id)! - writtenAt.get(id)! - WINDOW_S * 1000).sort((a, b) => a - b);
    // V's answers clear of the host's steal: none of their time in an interval it took > STEAL_CALM_MAX %.
    const stolen = s.steal.samples.filter(([, p]) => p > STEAL_CALM_MAX).map(([end]) => [end - STEAL_SAMPLE_MS, end]);
    const calm = s.sender.timeline
      .filter(([sent, took]) => !stolen.some(([from, to]) => sent < to && sent + took > from))
      .map(([, took]) => took)
      .sort((a, b) => a - b);
    return {
      calmP99: pct(calm, 99),
      calm: calm.length,
      answers: s.sender.timeline.length,
      stolenIntervals: stolen.length,
      writeP50: pct(toWrite, 50),
      writeP99: pct(toWrite, 99),
      dueP50: pct(afterDue, 50),
      dueP99: pct(afterDue, 99),
      p50: pct(lat, 50),
      p99: pct(lat, 99),
      lateP50: pct(late, 50),
      lateP99: pct(late, 99),
      matured: late.length,
      sessions: Object.keys(s.sender.sentAt).length,
      non200: s.sender.non200,
    };
  };
  console.log(
    `flood (${SECONDS} s stages; flooder nice ${args["flooder-nice"]}; processor, dispatcher and Postgres nice ${downstreamNice}; V ${args["v-rate"]} traces/s over 2 services subscribed to session.matured; ` +
      `F ${args.connections} connections, limit ${LIMIT.perSecond}/s burst ${LIMIT.burst}; window ${WINDOW_S} s; ` +
      `INGEST lanes: V ${lane(v.tenantId)}, F ${lane(f.tenantId)})`,
  );
  const cores = (c: Record<string, number>) =>
    Object.entries(c)
      .filter(([, v]) => v > 0.005 * SECONDS)
      .map(([k, v]) => `${k} ${((100 * v) / SECONDS).toFixed(0)}%`)
      .join(", ");
  const label: Record<Kind, string> = {
    alone: "V alone (floor):",
    polite: "V beside F polite:",
    flood: "V during flood:",
  };
  for (const door of DOORS) {
    const of = (kind: Kind) => stages.find((s) => s.door === door && s.kind === kind);
    const alone = of("alone")!;
    const a = figures(alone);
    console.log(`  ${door}:`);
    for (const kind of KINDS) {
      const stage = of(kind)!;
      const b = figures(stage);
      console.log(
        `    ${label[kind].padEnd(19)} ingest p50 ${ms(b.p50)} p99 ${ms(b.p99)}; lateness p50 ${ms(b.lateP50)} p99 ${ms(b.lateP99)}; matured ${b.matured}/${b.sessions}, non-200 ${b.non200} (load ${stage.load.toFixed(1)}; host steal ${stage.steal.stage.toFixed(1)}%, worst ${STEAL_SAMPLE_MS} ms ${Math.max(0, ...stage.steal.samples.map(([, p]) => p)).toFixed(0)}%)`,
      );
      console.log(
        `    ${"".padEnd(19)} outside the host's steal: ingest p99 ${ms(b.calmP99)} (${b.calm} of ${b.answers} answers; ${b.stolenIntervals} intervals of ${STEAL_SAMPLE_MS} ms over ${STEAL_CALM_MAX}% left out)`,
      );
      // Runnable but not running: the time each hop of V's request queued for a core (the scheduler's count).
      const waited = Object.entries(stage.waits)
        .map(
          ([k, w]) =>
            `${k} ${Math.round(w.seconds * 1000)} ms (${Math.round((w.seconds * 1e6) / Math.max(1, w.runs))} us per run)`,
        )
        .join(", ");
      console.log(`    ${"".padEnd(19)} waited for a core over the stage: ${waited}`);
    }
    for (const kind of KINDS.filter((k) => k !== "alone")) {
      const stage = of(kind)!;
      const b = figures(stage);
      const fl = stage.flooder!;
      const name = kind === "flood" ? "flood" : "F polite";
      console.log(
        `    ratio ${name}/floor: ingest p50 ${ratio(b.p50, a.p50)} p99 ${ratio(b.p99, a.p99)} (outside the host's steal ${ratio(b.calmP99, a.calmP99)}); lateness p50 ${ratio(b.lateP50, a.lateP50)} p99 ${ratio(b.lateP99, a.lateP99)}${kind === "flood" ? " (target 1.5x)" : ""}`,
      );
      console.log(
        `      V's lateness split, floor -> ${name}: sent->written p50/p99 ${ms(a.writeP50)}/${ms(a.writeP99)} -> ${ms(b.writeP50)}/${ms(b.writeP99)}; due->matured p50/p99 ${ms(a.dueP50)}/${ms(a.dueP99)} -> ${ms(b.dueP50)}/${ms(b.dueP99)}`,
      );
      console.log(`      CPU (% of one core over the stage), floor: ${cores(alone.cpu)}`);
      console.log(`      CPU, ${name}: ${cores(stage.cpu)}`);
      // The flooding client beside the server: what a flood from elsewhere would not cost this machine.
      const usPerRequest = (1e6 * fl.cpu) / Math.max(1, fl.requests);
      console.log(
        `      F's client: ${((100 * fl.cpu) / SECONDS).toFixed(0)}% of a core (${Math.round(usPerRequest)} us per request; bodies built before the start: ${(fl.prepCpu ?? 0).toFixed(2)} s CPU${fl.startLate ? `, started ${Math.round(fl.startLate)} ms late` : ""}${fl.built ? `, ${fl.built} built during it` : ""}) beside ingest ${((100 * (stage.cpu.ingest ?? 0)) / SECONDS).toFixed(0)}%`,
      );
      console.log(
        `      F: ${fl.requests} requests (${Math.round(fl.requests / SECONDS)}/s), ${fl.ok} answered 200, ${fl.refused} 429, ${fl.other} other; admitted ${Math.round(fl.items / SECONDS)} items/s against a limit of ${LIMIT.perSecond}/s (burst ${LIMIT.burst})`,
      );
    }
  }

  // The cost of a refusal: a second ingest whose credential buckets are empty after one request.
  const refusing = await bench.spawnApp("ingest", {
    // Unpaced (every 429 at once): this measures what a refusal costs, not how often one is sent.
    env: {
      ...env,
      INGEST_RATE_LIMIT_PER_SECOND: "0.001",
      INGEST_RATE_LIMIT_BURST: "1",
      INGEST_RATE_LIMIT_PACING_MS: "0",
    },
  });
  const cpu = () => procStat(refusing.child.pid!)?.own ?? 0;
  console.log(`  refusal cost (ingest CPU per 429, bucket empty; load ${loadavg()[0].toFixed(1)}):`);
  for (const door of ["batch", "otlp"] as const) {
    const line: string[] = [];
    for (const kb of [1, 1024]) {
      const c0 = cpu();
      const r = await client<{ refused: number; other: number; seconds: number; bytes: number; inflated: number }>(
        bench,
        "--refusals",
        {
          base: `http://127.0.0.1:${refusing.port}`,
          door,
          key: f.telemetryKey,
          kb,
          seconds: 4,
          connections: 8,
        },
      );
      const us = ((cpu() - c0) * 1e6) / Math.max(1, r.refused);
      line.push(
        `${Math.round(r.inflated / 1024)} KB body (${Math.round(r.bytes / 1024)} KB on the wire): ${Math.round(us)} us per refusal (${r.refused} refused, ${r.other} other)`,
      );
    }
    console.log(`    ${door}: ${line.join("; ")}`);
  }
  console.log(
    `  load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
});
