/**
 * `npm run bench:e2e`: the whole system on this machine -- ingest, processor(s), platform and
 * dispatcher as the real `main.ts` child processes, nats-server, Postgres, and a load generator
 * (autocannon, its own process) -- at a fixed offered rate, with the floor measured in the same
 * run: a bare JetStream publish plus a bare Postgres COPY of the same rows.
 *
 * Per stage (one offered rate for --seconds): whether the processor's lag stays flat, CPU per
 * trace of every process (from /proc), ingest p99 (autocannon), ingest-to-readable p99 (a probe
 * trace posted every 100 ms, its spans polled through the platform until they appear), and
 * maturation lateness p99 (matured_at - last write - window, over the sessions that ended while
 * traffic went on; those still open at the end all end at once and are reported apart).
 * A rate is reported as **sustained** only by a stage of the full --seconds that held flat lag and
 * the lateness target (p99 under --lateness-target ms), and in --webhooks mode delivered every
 * event once with a valid signature. `--search` looks for the highest rate whose shorter stages
 * meet the same targets (flat lag, lateness p99, webhooks): those only choose which rate runs for
 * the full length (and, if that one does not hold, up to two lower ones, each 3/4 of the last);
 * they never count as sustained. (Judged on flat lag alone, at 3 million stored it chose 3,519/s
 * where lateness had bound from 1,700/s, and sustained none of its full stages.)
 * `--webhooks` subscribes the service of --tenants tenants (the traffic spread over them) to both
 * event types through the platform API, delivered to a local receiver that verifies every
 * signature (bench/e2e/webhooks.ts). `--reads` times the platform reads at the database's size.
 *
 * A window longer than the stage (`--window 90 --seconds 60`) measures the write path alone
 * (nothing matures during the stage), then the maturation of everything it wrote, after it, against
 * a bare maturation of the same rows measured with the floor (bench/e2e/floor.ts): the issue's
 * first two figures from one run; `--webhooks` or `--probe` gives the third.
 *
 *   bun run bench/e2e.ts [--rate 4000] [--seconds 60] [--search] [--processors 1] [--window 10]
 *     [--webhooks] [--tenants 3] [--data-dir <cluster seeded by bench/seed.ts>] [--floor-rows 20000]
 *     [--reads] [--no-floor] [--batch 1]
 *
 * `--batch N` (N > 1) sends the traffic as the SDKs do, N traces per `POST /raw/batch`; ingest
 * p50/p99 are then per request of N traces.
 *
 * `--figure3` is issue 36's third figure: `--webhooks --batch 20 --services 5 --tenants 3`, a
 * stage sustained only with delivery lag p99 under `--delivery-lag-target` (5000 ms), and a last
 * line against its targets (25% of the floor's rate, 4x its CPU).
 *
 * `--probe` sends it as a new user without an SDK does (issue 36): single `POST /raw/traces`,
 * spread over `--tenants` (3) tenants with `--services` (5) services each, every service
 * subscribed to both event types (implies `--webhooks`, `--batch 1`). `--services N` alone spreads
 * any run's traffic over N services per tenant.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { randomBytes, toBase64 } from "@cellar/shared/crypto";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { connectNats, createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import { activityStream, ingestStream } from "@cellar/shared/nats/catalogue";
import { consumerBacklog } from "@cellar/shared/nats/consume/lanes";
import { startNatsServer } from "../scripts/infra/nats-server";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { stopChild } from "../scripts/infra/processes";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { cpuByProcess, cpuDelta, pct, postmasterPid } from "./lib/proc";
import { measureFloor } from "./e2e/floor";
import { measureReads } from "./e2e/reads";
import { makeTemplates } from "./lib/traces";
import { printStorage, storageReport } from "./lib/storage";
import { fastSettings, readSeedKeys, type SeedKeys } from "./e2e/cluster";
import { setupWebhooks, type WebhookRig, type WebhookStage } from "./e2e/webhooks";

const ROOT = resolve(import.meta.dir, "..");
const { values: args } = parseArgs({
  options: {
    rate: { type: "string", default: "4000" },
    seconds: { type: "string", default: "60" },
    search: { type: "boolean", default: false },
    "search-seconds": { type: "string", default: "20" },
    "search-start": { type: "string", default: "2000" },
    "search-max": { type: "string", default: "20000" },
    processors: { type: "string", default: "1" },
    window: { type: "string", default: "10" },
    "data-dir": { type: "string" },
    "floor-rows": { type: "string", default: "20000" },
    "no-floor": { type: "boolean", default: false },
    reads: { type: "boolean", default: false },
    "lateness-target": { type: "string", default: "2000" },
    webhooks: { type: "boolean", default: false },
    tenants: { type: "string", default: "3" },
    /** Loads pg_stat_statements and prints each stage's costliest statements. */
    "pg-stats": { type: "boolean", default: false },
    /** Prints bytes on disk per trace (tables, TOAST, indexes) after the stages. */
    storage: { type: "boolean", default: false },
    connections: { type: "string", default: "64" },
    /** Traces per request: > 1 sends `POST /raw/batch` bodies of that many, as the SDKs do. */
    batch: { type: "string", default: "1" },
    /** A new user's traffic: single posts from --services services of --tenants tenants, all subscribed. */
    probe: { type: "boolean", default: false },
    /**
     * Issue 36's third figure: the whole system with webhooks on every service as the SDKs send
     * (implies --webhooks, --batch 20, --services 5, --tenants 3); a stage is sustained only if
     * its delivery lag p99 is also under --delivery-lag-target ms, and the run ends with the
     * figure against its targets (25% of the floor's rate, 4x its CPU).
     */
    figure3: { type: "boolean", default: false },
    "delivery-lag-target": { type: "string", default: "5000" },
    /** Services per tenant the traffic is spread over (--probe: 5). */
    services: { type: "string" },
    /** Seconds between a session's traces, and how long a generation of sessions lasts. */
    gap: { type: "string", default: "2" },
    gen: { type: "string", default: "20" },
    /** KEY=VALUE added to every app's environment (A/B runs), repeatable. */
    "app-env": { type: "string", multiple: true, default: [] },
  },
});
if (args.probe) {
  args.webhooks = true;
  args.batch = "1";
  args.services ??= "5";
}
if (args.figure3) {
  args.webhooks = true;
  args.batch = "20";
  args.services ??= "5";
  args.tenants = "3";
}
const WINDOW = Number(args.window);
const PROCESSORS = Number(args.processors);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
/** Least-squares slope of evenly spaced samples (per sample step). */
function slope(ys: number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  const my = avg(ys);
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (i - mx) * (ys[i] - my);
    den += (i - mx) ** 2;
  }
  return num / den;
}

export interface StageResult {
  rate: number;
  seconds: number;
  ok: number;
  achieved: number;
  failed: number;
  holds: boolean;
  lagSlope: number;
  lags: number[];
  drainSeconds: number;
  ingestP50: number;
  ingestP99: number;
  readableP50: number;
  readableP99: number;
  readableMissing: number;
  latenessP50: number;
  latenessP99: number;
  latenessMax: number;
  /** Sessions that ended while traffic went on (the lateness figures above). */
  steadySessions: number;
  /** The sessions open when the generator stopped, which all end at once: p99 of that drain. */
  tailP99: number;
  tailSessions: number;
  sessions: number;
  maturedSessions: number;
  cpuUsPerTrace: Record<string, number>;
  totalUsPerTrace: number;
  load: string;
  /** Activity KV messages (puts + markers) per accepted trace. */
  kvPerTrace: number;
  /** The activity consumer's backlog, sampled each second: markers waiting is maturation behind. */
  activityLags: number[];
  /** --webhooks: the stage's deliveries, settled. */
  webhooks: WebhookStage | null;
  /** Held flat lag, met the lateness target and (webhooks) delivered all, at whatever length. */
  meetsTargets: boolean;
  /** A stage of the full --seconds that met the targets. */
  sustained: boolean;
  /**
   * With a window longer than the stage (nothing matures during it: the write path alone), the
   * CPU per accepted trace of the maturations that followed it, until every session published.
   */
  maturationUsPerTrace: Record<string, number> | null;
  maturationTotalUs: number | null;
}

async function main() {
  const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-e2e-"));
  const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
  const pgDir = args["data-dir"] ? resolve(args["data-dir"]) : join(scratch, "pg");
  // Kept (persistent) even in scratch: --pg-stats restarts it with pg_stat_statements loaded;
  // fastSettings gives it the throwaway clusters' crash-unsafe settings.
  let pg = await startEmbeddedPostgres({ dataDir: pgDir, persistent: true });
  const children: ChildProcess[] = [];
  try {
    let database = createDatabase(pg.url, { max: 4 });
    await fastSettings(database.sql);
    if (args["pg-stats"]) {
      const [{ shared_preload_libraries: loaded }] = await database.sql<
        { shared_preload_libraries: string }[]
      >`show shared_preload_libraries`;
      if (!loaded.includes("pg_stat_statements")) {
        await database.sql`alter system set shared_preload_libraries = 'pg_stat_statements'`;
        await database.close();
        await pg.stop();
        pg = await startEmbeddedPostgres({ dataDir: pgDir, persistent: true });
        database = createDatabase(pg.url, { max: 4 });
      }
      await database.sql`create extension if not exists pg_stat_statements`;
    }
    const { sql } = database;
    await runMigrations(pg.url);
    let keys: SeedKeys;
    if (args["data-dir"] && existsSync(`${pgDir}.keys.json`)) keys = readSeedKeys(pgDir);
    else {
      const t = await bootstrapTenant(database.db, { name: "bench", plan: "pro", webhooks: args.webhooks });
      keys = { tenantId: t.tenantId, telemetryKey: t.telemetryKey, platformKey: t.platformKey, service: "support-bot" };
    }
    /** The services the traffic is spread over, per tenant (the first is the seeded one). */
    const services = Array.from({ length: Math.max(1, Number(args.services ?? 1)) }, (_, i) =>
      i === 0 ? keys.service : `${keys.service}-${i + 1}`,
    );
    const [{ n: storedAtStart }] = await sql<{ n: number }[]>`select count(*)::int as n from traces`;
    console.log(
      `e2e: ${storedAtStart.toLocaleString("en")} traces stored at start; ${PROCESSORS} processor(s); window ${WINDOW} s; load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );

    const nc = await connectNats(nats.url, "bench-e2e");
    const topology = createTopology();
    const { jsm } = await ensureTopology(nc, topology);

    const floor = args["no-floor"]
      ? null
      : await measureFloor({ nc, sql, pgDir, natsPid: nats.process.pid!, rows: Number(args["floor-rows"]) });

    const ingestPort = await freePort();
    const platformPort = await freePort();
    const env = {
      ...process.env,
      NATS_URL: nats.url,
      DATABASE_URL: pg.url,
      SECRET_ENCRYPTION_KEY: toBase64(randomBytes(32)),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error",
      INGEST_PORT: String(ingestPort),
      INGEST_GRPC_PORT: "0",
      PLATFORM_PORT: String(platformPort),
      MATURATION_WINDOW_SECONDS: String(WINDOW),
      INGEST_RATE_LIMIT_PER_SECOND: "0",
      ...(args.webhooks ? { WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8" } : {}),
      ...Object.fromEntries(
        (args["app-env"] as string[]).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
      ),
    };
    // BENCH_<APP>_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/x" profiles one app.
    // Each app's /health port picked free: the defaults (3300, 3400) may be taken on a shared machine.
    /** Each processor's /health, /ready and /metrics port. */
    const processorPorts: number[] = [];
    const start = async (app: string) => {
      const flags = (process.env[`BENCH_${app.toUpperCase()}_FLAGS`] ?? "").split(" ").filter(Boolean);
      const healthPort = await freePort();
      if (app === "processor") processorPorts.push(healthPort);
      const c = spawn(process.execPath, [...flags, `apps/${app}/src/main.ts`], {
        cwd: ROOT,
        env: { ...env, HEALTH_PORT: String(healthPort) },
        stdio: ["ignore", "ignore", "inherit"],
      });
      children.push(c);
      return c;
    };
    const ingest = await start("ingest");
    const platform = await start("platform");
    const dispatcher = await start("dispatcher");
    const processors = await Promise.all(Array.from({ length: PROCESSORS }, () => start("processor")));
    await Promise.all([waitForPort(ingestPort, 60_000), waitForPort(platformPort, 60_000)]);
    await sleep(2000);
    const postmaster = postmasterPid(pgDir);
    const cpu = (loadgen?: number) =>
      cpuByProcess(
        {
          ingest: [ingest.pid],
          processor: processors.map((p) => p.pid),
          platform: [platform.pid],
          dispatcher: [dispatcher.pid],
          nats: [nats.process.pid],
          loadgen: [loadgen],
          bench: [process.pid],
        },
        postmaster,
      );

    /** Messages the durable consumers of a catalogue stream (every lane) have not yet acknowledged. */
    const backlog = (spec: typeof ingestStream | typeof activityStream) => consumerBacklog(jsm, spec, topology);
    const lag = () => backlog(ingestStream);
    /** Markers (and puts) the processor's activity consumer has not yet acknowledged. */
    const activityLag = () => backlog(activityStream);
    const ingestUrl = `http://127.0.0.1:${ingestPort}/raw/traces`;
    const platformBase = `http://127.0.0.1:${platformPort}/api/v1`;
    const probeBody = makeTemplates(1)[0];
    let stageNo = 0;
    let webhooks: WebhookRig | null = null;
    if (args.webhooks) {
      webhooks = await setupWebhooks({
        db: database.db,
        sql,
        platformBase,
        tenants: Number(args.tenants),
        services,
        own: { tenantId: keys.tenantId, platformKey: keys.platformKey },
      });
      children.push(webhooks.receiver);
    }
    const telemetryKeys = [keys.telemetryKey, ...(webhooks?.extraTelemetryKeys ?? [])];

    async function stage(rate: number, seconds: number, full = true): Promise<StageResult> {
      const prefix = `e${Date.now().toString(36)}s${++stageNo}`;
      const stageStart = new Date();
      if (args["pg-stats"]) await sql`select pg_stat_statements_reset()`;
      // Messages into the activity KV stream (puts and markers): what coalescing saves, exactly.
      const activitySeq = async () => (await jsm.streams.info(`KV_${topology.activityBucket}`)).state.last_seq;
      const kv0 = await activitySeq();
      const cpu0 = cpu();
      const loadgen = spawn(
        process.execPath,
        [
          "bench/e2e/loadgen.ts",
          JSON.stringify({
            url: ingestUrl,
            keys: telemetryKeys,
            rate,
            seconds,
            prefix,
            connections: Number(args.connections),
            gapSeconds: Number(args.gap),
            genSeconds: Number(args.gen),
            batch: Number(args.batch),
            services,
          }),
        ],
        { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
      );
      let out = "";
      loadgen.stdout!.on("data", (d) => (out += d));
      let loadgenCpu = 0;
      const loadgenDone = new Promise<void>((res) => loadgen.once("exit", () => res()));
      const lags: number[] = [];
      const activityLags: number[] = [];
      const readable: number[] = [];
      let missing = 0;
      let running = true;
      const lagLoop = (async () => {
        while (running) {
          await sleep(1000);
          if (running) lags.push(await lag());
          if (running) activityLags.push(await activityLag());
          loadgenCpu = cpu(loadgen.pid).loadgen || loadgenCpu;
        }
      })();
      // Probes: a trace every 500 ms; readable = its spans come back from the platform. Polls
      // back off (50 ms, then 10% of the time waited so far), so they cost the platform and
      // Postgres little next to the load (~30 polls per probe).
      const probes: Promise<void>[] = [];
      const probeLoop = (async () => {
        for (let k = 0; running; k++) {
          await sleep(500);
          const traceId = `${prefix}-probe-${k}`;
          const body = probeBody.replace(
            '"session_id":"__SESSION__"',
            `"session_id":"${prefix}-probe-${k % 5}","trace_id":"${traceId}"`,
          );
          probes.push(
            (async () => {
              const t0 = performance.now();
              // A refused or reset probe (an overloaded ingest) counts as missing; it never ends the run.
              const res = await fetch(ingestUrl, {
                method: "POST",
                headers: { "content-type": "application/json", authorization: `Bearer ${keys.telemetryKey}` },
                body,
              }).catch(() => null);
              await res?.arrayBuffer().catch(() => undefined);
              if (res?.status !== 200) return void missing++;
              while (performance.now() - t0 < 60_000) {
                const r = await fetch(`${platformBase}/telemetry/otel/spans/${keys.service}/${traceId}`, {
                  headers: { authorization: `Token ${keys.platformKey}` },
                }).catch(() => null);
                const j =
                  r?.status === 200
                    ? ((await r.json().catch(() => null)) as { spans: unknown[] } | null)
                    : (await r?.arrayBuffer().catch(() => undefined), null);
                if (j && j.spans.length > 0) return void readable.push(performance.now() - t0);
                await sleep(Math.max(50, (performance.now() - t0) / 10));
              }
              missing++;
            })(),
          );
        }
      })();
      await loadgenDone;
      running = false;
      await Promise.all([lagLoop, probeLoop]);
      const lg = JSON.parse(out.trim().split("\n").pop() || "{}");
      const tail0 = performance.now();
      while ((await lag()) > 0 && performance.now() - tail0 < 180_000) await sleep(100);
      const drainSeconds = (performance.now() - tail0) / 1000;
      await Promise.all(probes);
      const cpuEnd = cpu();
      const cpu1 = { ...cpuEnd, loadgen: lg.cpuSeconds ?? loadgenCpu };
      const kvPerTrace = ((await activitySeq()) - kv0) / Math.max(1, lg.ok ?? 1);
      const okNow = JSON.parse(out.trim().split("\n").pop() || "{}").ok || 1;
      if (args["pg-stats"]) {
        await printPgStats(sql, okNow, "postgres statements (execution time per accepted trace, us):");
        await sql`select pg_stat_statements_reset()`;
      }
      const used = cpuDelta({ ...cpu0, loadgen: 0 }, cpu1);

      // Lateness over the stage's sessions, once they all matured (or a bound passed).
      const deadline = Date.now() + (WINDOW + 90) * 1000;
      let counts = { n: 0, m: 0 };
      while (Date.now() < deadline) {
        [counts] = await sql<
          { n: number; m: number }[]
        >`select count(*)::int as n, count(*) filter (where published_count >= 1)::int as m from sessions where session_id like ${prefix + "-%"}`;
        if (counts.m >= counts.n) break;
        await sleep(1000);
      }
      // The write path alone (a window longer than the stage): what maturing it all cost after.
      const writePathOnly = WINDOW > seconds;
      const maturationUsed = writePathOnly ? cpuDelta(cpuEnd, cpu()) : null;
      // Where a session's lateness goes after its marker: the processors' marker-to-done histogram.
      if (writePathOnly) console.log(await markerToDone(processorPorts));
      if (args["pg-stats"] && writePathOnly)
        await printPgStats(
          sql,
          okNow,
          "postgres statements of the maturation after the stage (per accepted trace, us):",
        );
      // Steady state: sessions that ended while traffic went on (their slot moved to a new
      // session). The sessions still open when the generator stopped all end together; their
      // lateness is the drain of that burst, reported apart (`tail`).
      const lateRows = await sql<{ late: number; tail: boolean }[]>`
        with s as (select matured_at, last_ingested_at from sessions where session_id like ${prefix + "-%"} and matured_at is not null)
        select extract(epoch from matured_at - last_ingested_at) - ${WINDOW} as late,
               last_ingested_at > (select max(last_ingested_at) from s) - make_interval(secs => ${Number(args.gap) + 1}) as tail
        from s`;
      const late = lateRows
        .filter((r) => !r.tail)
        .map((r) => Number(r.late) * 1000)
        .sort((a, b) => a - b);
      const tailLate = lateRows
        .filter((r) => r.tail)
        .map((r) => Number(r.late) * 1000)
        .sort((a, b) => a - b);
      readable.sort((a, b) => a - b);

      const ok = lg.ok ?? 0;
      const cpuUsPerTrace: Record<string, number> = {};
      for (const [k, v] of Object.entries(used)) cpuUsPerTrace[k] = ok ? Math.round((v * 1e6) / ok) : 0;
      const third = Math.max(1, Math.floor(lags.length / 3));
      const lagSlope = slope(lags.slice(third));
      const achieved = ok / seconds;
      const failed = (lg.non2xx ?? 0) + (lg.errors ?? 0) + (lg.timeouts ?? 0);
      // Flat: after the first third, lag grows by less than 2% of the offered rate per second (or
      // stays under a second of traffic), it drains within 10 s of the last request, and the
      // generator got its rate out with no failures.
      // Lag is sampled in whole INGEST batches (up to 500), so a backlog under a second of
      // traffic counts as flat whatever its slope.
      const lastThirdMax = Math.max(0, ...lags.slice(-third));
      const holds =
        (lagSlope < 0.02 * rate || lastThirdMax <= rate) &&
        drainSeconds <= 10 &&
        achieved >= 0.97 * rate &&
        failed === 0;
      const hooks = webhooks ? await webhooks.settle({ sql, prefix, since: stageStart, boundMs: 120_000 }) : null;
      const latenessP99 = Math.round(pct(late, 99));
      const meetsTargets =
        holds &&
        late.length > 0 &&
        latenessP99 < Number(args["lateness-target"]) &&
        (hooks?.ok ?? true) &&
        (!args.figure3 || (hooks !== null && hooks.lagP99 < Number(args["delivery-lag-target"])));
      const sustained = meetsTargets && full;
      const r: StageResult = {
        rate,
        seconds,
        ok,
        achieved: Math.round(achieved),
        failed,
        holds,
        lagSlope: Math.round(lagSlope),
        lags,
        drainSeconds: +drainSeconds.toFixed(1),
        ingestP50: lg.p50,
        ingestP99: lg.p99,
        readableP50: Math.round(pct(readable, 50)),
        readableP99: Math.round(pct(readable, 99)),
        readableMissing: missing,
        latenessP50: Math.round(pct(late, 50)),
        latenessP99,
        latenessMax: Math.round(pct(late, 100)),
        steadySessions: late.length,
        tailP99: Math.round(pct(tailLate, 99)),
        tailSessions: tailLate.length,
        sessions: counts.n,
        maturedSessions: lateRows.length,
        // The system: the apps, nats-server and Postgres. Not the load generator, not the bench's
        // monitor, and not the platform (its CPU here is the probes' polling, not pipeline work).
        cpuUsPerTrace,
        totalUsPerTrace: Object.entries(cpuUsPerTrace)
          .filter(([k]) => !["bench", "loadgen", "platform"].includes(k))
          .reduce((s, [, v]) => s + v, 0),
        load: loadavg()
          .map((x) => x.toFixed(1))
          .join(" "),
        kvPerTrace: +kvPerTrace.toFixed(2),
        activityLags,
        webhooks: hooks,
        meetsTargets,
        sustained,
        maturationUsPerTrace: null,
        maturationTotalUs: null,
      };
      if (maturationUsed) {
        const per: Record<string, number> = {};
        for (const [k, v] of Object.entries(maturationUsed)) per[k] = ok ? Math.round((v * 1e6) / ok) : 0;
        r.maturationUsPerTrace = per;
        r.maturationTotalUs = ["processor", "postgres", "nats", "dispatcher"].reduce((t, k) => t + (per[k] ?? 0), 0);
      }
      printStage(r);
      return r;
    }

    const results: StageResult[] = [];
    if (args.search) {
      const ss = Number(args["search-seconds"]);
      // A short stage counts as passing on the targets a full one must meet; the write path alone
      // (a window longer than the stage, nothing maturing during it) is judged on flat lag, its rule.
      const chosen = (s: StageResult) => (WINDOW > s.seconds ? s.holds : s.meetsTargets);
      let lo = 0;
      let hi = Number(args["search-max"]);
      let r = Number(args["search-start"]);
      let failedAt = Infinity;
      while (r <= hi && failedAt === Infinity) {
        const s = await stage(r, ss, false);
        results.push(s);
        if (chosen(s)) lo = r;
        else failedAt = r;
        r = Math.round(r * 1.5);
      }
      hi = Math.min(hi, failedAt);
      for (let i = 0; i < 2 && hi - lo > Math.max(250, lo * 0.1); i++) {
        const mid = Math.round((lo + hi) / 2);
        const s = await stage(mid, ss, false);
        results.push(s);
        if (chosen(s)) lo = mid;
        else hi = mid;
      }
      console.log(
        `search: highest rate with ${WINDOW > ss ? "flat lag" : `flat lag and lateness p99 under ${args["lateness-target"]} ms`} over ${ss} s stages: ${lo}/s (first failing: ${hi === Number(args["search-max"]) ? "none" : hi + "/s"})`,
      );
      // The short stages only choose the rate; the full-length stage decides what is sustained.
      for (let i = 0, rate = lo; i < 3 && rate > 0; i++, rate = Math.round(rate * 0.75)) {
        const full = await stage(rate, Number(args.seconds));
        results.push(full);
        if (full.sustained) break;
      }
    } else {
      results.push(await stage(Number(args.rate), Number(args.seconds)));
    }

    const reads = args.reads
      ? await measureReads({
          sql,
          base: platformBase,
          token: keys.platformKey,
          service: keys.service,
          cpu: () => cpu(),
        })
      : null;

    console.log(
      Number(args.batch) > 1
        ? `\ntraffic: POST /raw/batch of ${args.batch} traces per request (ingest p50/p99 per request)`
        : "\ntraffic: POST /raw/traces, one trace per request",
      `from ${telemetryKeys.length} tenant(s) x ${services.length} service(s)${args.webhooks ? ", every service subscribed to both event types" : ""}${args.probe ? " (--probe)" : ""}`,
    );
    console.log(
      "| offered/s | s | achieved/s | flat | sustained | lag slope/s | drain s | ingest p50/p99 ms | readable p50/p99 ms | lateness p50/p99/max ms | CPU us/trace system (ingest, processor, postgres, nats, dispatcher) + platform probes, loadgen | load |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (const r of results) {
      const c = r.cpuUsPerTrace;
      console.log(
        `| ${r.rate} | ${r.seconds} | ${r.achieved} | ${r.holds ? "yes" : "no"} | ${r.sustained ? "yes" : "no"} | ${r.lagSlope} | ${r.drainSeconds} | ${r.ingestP50}/${r.ingestP99} | ${r.readableP50}/${r.readableP99} | ${r.latenessP50}/${r.latenessP99}/${r.latenessMax} | ${r.totalUsPerTrace} (${c.ingest}, ${c.processor}, ${c.postgres}, ${c.nats}, ${c.dispatcher}) + ${c.platform}, ${c.loadgen} | ${r.load} |`,
      );
    }
    if (floor) {
      // Only a full-length stage that held flat lag, the lateness target (and every webhook).
      const best = results.filter((r) => r.sustained).sort((a, b) => b.rate - a.rate)[0];
      const appsUs = (r: StageResult) => r.totalUsPerTrace;
      console.log(
        `\nfloor (same run): bare JetStream publish ${floor.publishPerSecond}/s (${floor.publishUs} us CPU/row) + bare COPY ${floor.copyPerSecond}/s (${floor.copyUs} us CPU/row) = ${floor.perSecond}/s serial, ${floor.totalUs} us CPU per row`,
      );
      // The write path alone (--window longer than the stage): flat lag is its rule; nothing matured during it.
      for (const r of results.filter((x) => x.maturationTotalUs !== null && x.seconds === Number(args.seconds))) {
        const m = r.maturationUsPerTrace!;
        console.log(
          `write path alone (window ${WINDOW} s > the stage): ${r.rate}/s ${r.holds ? "held flat lag" : "did NOT hold flat lag"} for ${r.seconds} s = ${((100 * r.achieved) / floor.perSecond).toFixed(0)}% of the floor's rate; CPU per trace ${r.totalUsPerTrace} us = ${(r.totalUsPerTrace / floor.totalUs).toFixed(1)}x the floor's`,
        );
        console.log(
          `maturation of that stage's sessions and traces (after it): ${r.maturationTotalUs} us per trace (processor ${m.processor}, postgres ${m.postgres}, nats ${m.nats}, dispatcher ${m.dispatcher}) = ${(r.maturationTotalUs! / floor.maturationUs).toFixed(1)}x the bare maturation's ${floor.maturationUs} us`,
        );
      }
      if (args.figure3) {
        // The figure as issue 36 states it: the best sustained rate, else the best stage, against the targets.
        const r =
          best ?? results.filter((x) => x.seconds === Number(args.seconds)).sort((a, b) => b.achieved - a.achieved)[0];
        if (r)
          console.log(
            `figure 3: ${best ? "sustained" : "NOT sustained, best full stage"} ${r.achieved}/s accepted of ${r.rate}/s = ${((100 * r.achieved) / floor.perSecond).toFixed(0)}% of the floor's rate (target at least 25%), CPU per trace ${r.totalUsPerTrace} us = ${(r.totalUsPerTrace / floor.totalUs).toFixed(1)}x the floor's (target at most 4x); webhooks ${r.webhooks?.ok ? "all delivered once, signed" : "NOT all delivered once and signed"}, delivery lag p99 ${r.webhooks?.lagP99} ms (target under ${args["delivery-lag-target"]}); lateness p99 ${r.latenessP99} ms; load ${r.load}`,
          );
      }
      if (!best) console.log("ratio: no rate sustained (no full-length stage held flat lag and the lateness target)");
      else
        console.log(
          `ratio: sustained ${best.rate}/s = ${((100 * best.rate) / floor.perSecond).toFixed(0)}% of the floor's rate; system CPU per trace ${appsUs(best)} us = ${(appsUs(best) / floor.totalUs).toFixed(1)}x the floor's`,
        );
    }
    if (reads) for (const r of reads) console.log(JSON.stringify(r));
    if (args.storage) printStorage(await storageReport(sql));
    await nc.close();
    await database.close();
  } finally {
    // A profiled app (BENCH_<APP>_FLAGS) writes its profile at exit: give shutdown time for it.
    await Promise.allSettled(children.map((c) => stopChild(c, 60_000)));
    await Promise.allSettled([nats.stop(), pg.stop()]);
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The processors' `cellar_maturation_lateness_seconds` (marker written -> its maturation done and
 * acked: batch, chunk slot, the chunk, the publish), summed over processors, as the share of
 * markers done within each bucket since they started.
 */
async function markerToDone(ports: number[]): Promise<string> {
  const counts = new Map<string, number>();
  for (const port of ports) {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`)
      .then((r) => r.text())
      .catch(() => "");
    for (const m of text.matchAll(/^cellar_maturation_lateness_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} (\d+)/gm))
      counts.set(m[1], (counts.get(m[1]) ?? 0) + Number(m[2]));
  }
  const all = counts.get("+Inf") ?? 0;
  if (!all) return "marker to maturation done: no markers counted";
  const within = ["0.25", "0.5", "1", "2", "5", "10"]
    .filter((le) => counts.has(le))
    .map((le) => `<= ${le} s ${((100 * counts.get(le)!) / all).toFixed(1)}%`);
  return `marker to maturation done (${all} markers): ${within.join(", ")}`;
}

/** The costliest statements since the last reset, per accepted trace, and all statements' calls per trace. */
async function printPgStats(sql: import("postgres").Sql, traces: number, title: string): Promise<void> {
  const top = await sql<{ calls: number; ms: number; rows: number; q: string }[]>`
    select calls::int, round(total_exec_time)::int as ms, rows::int, regexp_replace(left(query, 110), '\\s+', ' ', 'g') as q
    from pg_stat_statements order by total_exec_time desc limit 15`;
  const [all] = await sql<{ calls: number; ms: number }[]>`
    select coalesce(sum(calls), 0)::float8 as calls, coalesce(sum(total_exec_time), 0)::float8 as ms from pg_stat_statements`;
  console.log(
    `${title} all statements ${((all.ms * 1000) / traces).toFixed(0)} us, ${(all.calls / traces).toFixed(2)} calls per trace`,
  );
  for (const t of top)
    console.log(
      `  ${String(Math.round((t.ms * 1000) / traces)).padStart(5)} us  ${String(t.calls).padStart(7)} calls  ${String(t.rows).padStart(8)} rows  ${t.q}`,
    );
}

function printStage(r: StageResult) {
  console.log(
    `stage ${r.rate}/s x ${r.seconds} s: ${r.achieved}/s accepted (${r.failed} failed), lag ${r.holds ? "FLAT" : "NOT flat"} (slope ${r.lagSlope}/s, samples ${r.lags.join(",")}), drained ${r.drainSeconds} s after; ` +
      `ingest p50 ${r.ingestP50} / p99 ${r.ingestP99} ms; readable p50 ${r.readableP50} / p99 ${r.readableP99} ms (${r.readableMissing} missing); ` +
      `lateness p50 ${r.latenessP50} / p99 ${r.latenessP99} / max ${r.latenessMax} ms over ${r.steadySessions} sessions ended during the run (the ${r.tailSessions} open at its end, all ending at once: p99 ${r.tailP99} ms; ${r.maturedSessions}/${r.sessions} matured); ` +
      `CPU us/trace ${r.totalUsPerTrace} ${JSON.stringify(r.cpuUsPerTrace)}; activity KV messages per trace ${r.kvPerTrace}; activity backlog samples ${r.activityLags.join(",")}; load ${r.load}` +
      (r.webhooks
        ? `; webhooks: ${r.webhooks.expected} expected, ${r.webhooks.recorded} recorded, ${r.webhooks.delivered} delivered, ${r.webhooks.receivedValid} received signed (${r.webhooks.invalid} bad signatures, ${r.webhooks.duplicates} repeats), delivery lag p50 ${r.webhooks.lagP50} / p99 ${r.webhooks.lagP99} ms`
        : "") +
      `; ${r.sustained ? "SUSTAINED" : r.meetsTargets ? "met the targets (a short stage: not counted as sustained)" : "not sustained"}`,
  );
}

await main();
process.exit(0);
