/**
 * `npm run bench -- startup [--rounds 5] [--hog-load 10] [--dist DIR] [--apps a,b]`: how long a
 * killed app takes from its start to a 200 on /ready (issue 41 part 3: recovery within 30 s while a
 * CPU hog holds the load near 10 on 2 cores), run from source as the image, compose and `npm run
 * dev` run it (`bun run apps/<app>/src/main.ts`), as one bundled file (`bun <dist>/<app>/main.js`)
 * and as a compiled executable with bytecode (`<dist>/<app>-bin`), beside the floor of a bare
 * `bun -e 0` (spawn to exit), all in the same run, interleaved, under the same hog. Also the CPU
 * the app used until ready (utime + stime from /proc). Build the bundles first, niced and outside
 * the bench lock: `nice bun scripts/bundle.ts DIR --compiled`.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../scripts/infra/ports";
import { BUNDLED_APPS, type BundledApp } from "../scripts/bundle";
import { startCpuHog } from "./chaos/hog";
import { ROOT, startBench } from "./lib/harness";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg("rounds", "5"));
const hogLoad = Number(arg("hog-load", "10"));
const dist = arg("dist", "");
const apps = arg("apps", BUNDLED_APPS.join(",")).split(",") as BundledApp[];
const PORT_VAR: Record<BundledApp, string> = {
  ingest: "INGEST_PORT",
  platform: "PLATFORM_PORT",
  processor: "PROCESSOR_PORT",
  dispatcher: "DISPATCHER_PORT",
};
const TICK_MS = 1000 / 100; // /proc/<pid>/stat's clock ticks (USER_HZ)

/** utime + stime of a live process, ms (null when it is gone). */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

const exited = (child: ChildProcess) =>
  new Promise<void>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r()),
  );

/** Spawns `argv`, polls http://127.0.0.1:<port>/ready every 10 ms until 200; then SIGKILL. */
async function startToReady(argv: string[], env: Record<string, string>, port: number) {
  const started = performance.now();
  let out = "";
  const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const keep = (d: Buffer) => {
    out = (out + d).slice(-4000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${argv.join(" ")} exited ${child.exitCode}: ${out}`);
      if (performance.now() - started > Number(process.env.STARTUP_TIMEOUT_MS ?? 120_000))
        throw new Error(`${argv.join(" ")} not ready in 120 s: ${out}`);
      const ok = await fetch(`http://127.0.0.1:${port}/ready`, { signal: AbortSignal.timeout(1_000) })
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) return { ms: performance.now() - started, cpuMs: cpuMs(child.pid!) ?? Number.NaN };
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill("SIGKILL");
    await exited(child);
  }
}

/** The floor: a bare Bun process, spawn to exit. */
async function bareBun() {
  const started = performance.now();
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await exited(child);
  return { ms: performance.now() - started, cpuMs: Number.NaN };
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toString() : "-");

const bench = await startBench("startup", { nats: true });
let hog: ReturnType<typeof startCpuHog> | undefined;
try {
  const variants: Array<{ name: string; argv: (app: BundledApp) => string[] | null }> = [
    { name: "source", argv: (app) => [process.execPath, "run", join(ROOT, `apps/${app}/src/main.ts`)] },
    {
      name: "bundle",
      argv: (app) =>
        dist && existsSync(join(dist, app, "main.js")) ? [process.execPath, resolve(dist, app, "main.js")] : null,
    },
    {
      name: "compiled",
      argv: (app) =>
        process.argv.includes("--no-setup") && app !== "ingest" && dist && existsSync(join(dist, `${app}-bin`))
          ? [resolve(dist, `${app}-bin`)]
          : null,
    },
  ];
  const ports = Object.fromEntries(await Promise.all(apps.map(async (a) => [a, await freePort()] as const)));
  const envOf = (app: BundledApp): Record<string, string> => ({
    ...(process.env as Record<string, string>),
    ...bench.appEnv,
    LOG_LEVEL: process.env.STARTUP_LOG_LEVEL ?? "error",
    // --no-setup: every variant starts without applying the migrations (as a deployment whose
    // setup runs apart); the compiled executable needs it (scripts/bundle.ts).
    ...(process.argv.includes("--no-setup") ? { SETUP_ON_START: "false" } : {}),
    INGEST_PORT: "0",
    PLATFORM_PORT: "0",
    PROCESSOR_PORT: "0",
    DISPATCHER_PORT: "0",
    [PORT_VAR[app]]: String(ports[app]),
  });
  // The setup (migrations, streams, consumers), as a deployment runs it before its apps.
  const setup = spawnSync(process.execPath, ["scripts/migrate.ts"], {
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), ...bench.appEnv },
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (setup.status !== 0) throw new Error(`scripts/migrate.ts failed (${setup.status})`);
  // One start of each before measuring: files in the page cache.
  for (const app of apps)
    for (const v of variants) {
      const argv = v.argv(app);
      if (argv) await startToReady(argv, envOf(app), ports[app]);
    }
  const load0 = loadavg();
  if (hogLoad > 0) {
    hog = startCpuHog({ targetLoad: hogLoad, maxMs: 30 * 60_000 });
    // Let the 1-minute load average climb a little before the first start.
    await new Promise((r) => setTimeout(r, 15_000));
  }
  const loadStart = loadavg();
  const results = new Map<string, { ms: number[]; cpu: number[] }>();
  const record = (k: string, r: { ms: number; cpuMs: number }) => {
    const e = results.get(k) ?? { ms: [], cpu: [] };
    e.ms.push(r.ms);
    e.cpu.push(r.cpuMs);
    results.set(k, e);
  };
  for (let round = 0; round < rounds; round++)
    for (const app of apps) {
      // Each round in another order, so no variant always follows the same one.
      const order = [...variants.keys()].map((i) => (i + round) % variants.length);
      record("floor", await bareBun());
      for (const i of order) {
        const argv = variants[i].argv(app);
        if (argv) record(`${app} ${variants[i].name}`, await startToReady(argv, envOf(app), ports[app]));
      }
      record("floor", await bareBun());
    }
  const loadEnd = loadavg();
  const floor = quantile(results.get("floor")!.ms, 0.5);
  console.log(
    `startup: ${rounds} rounds, hog ${hog ? `${hog.workers} busy loops (target load ${hogLoad})` : "off"}; load (1/5/15 min) before the hog ${load0.map((l) => l.toFixed(1)).join("/")}, at the first start ${loadStart.map((l) => l.toFixed(1)).join("/")}, at the end ${loadEnd.map((l) => l.toFixed(1)).join("/")}`,
  );
  console.log(
    `floor (bun -e 0, spawn to exit): p50 ${fmt(floor)} ms, p90 ${fmt(quantile(results.get("floor")!.ms, 0.9))} ms`,
  );
  console.log("app        variant    start-to-ready p50 / p90 ms   x floor   x source   CPU to ready p50 ms");
  for (const app of apps) {
    const source = results.get(`${app} source`);
    for (const v of variants) {
      const r = results.get(`${app} ${v.name}`);
      if (!r) continue;
      const p50 = quantile(r.ms, 0.5);
      console.log(
        `${app.padEnd(10)} ${v.name.padEnd(10)} ${`${fmt(p50)} / ${fmt(quantile(r.ms, 0.9))}`.padStart(26)}   ${(p50 / floor).toFixed(1).padStart(7)}   ${source ? (p50 / quantile(source.ms, 0.5)).toFixed(2).padStart(8) : "-"}   ${fmt(quantile(r.cpu, 0.5)).padStart(8)}`,
      );
    }
  }
} finally {
  await hog?.stop();
  await bench.stop();
}
