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
import { stopChild } from "../../scripts/infra/processes";

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
  const stop = async () => {
    for (const fn of hooks.splice(0).reverse()) await Promise.resolve(fn()).catch((err) => console.error(err));
    await Promise.allSettled(children.splice(0).map(({ child, graceMs }) => stopChild(child, graceMs)));
    await database?.close().catch(() => {});
    await Promise.allSettled([nats?.stop(), pg?.stop()]);
    rmSync(scratch, { recursive: true, force: true });
  };
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

/** Runs `body` on a fresh bench set-up and always takes it down, then exits with the body's outcome. */
export async function runBench(
  name: string,
  opts: BenchOptions,
  body: (bench: Bench) => Promise<void>,
): Promise<never> {
  const bench = await startBench(name, opts);
  let code = 0;
  try {
    await body(bench);
  } catch (err) {
    console.error(err);
    code = 1;
  } finally {
    await bench.stop();
  }
  process.exit(code);
}
