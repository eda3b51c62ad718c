import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { freePort, waitForPort } from "./ports";

const ROOT = resolve(import.meta.dir, "../..");
const MIN_VERSION = [2, 11, 0];

/** NATS_SERVER_BIN, then PATH, then the project cache; installs into the cache when none is found. */
export function findNatsServer(): string {
  const candidates = [
    process.env.NATS_SERVER_BIN,
    which("nats-server"),
    join(ROOT, ".cache/nats-server/nats-server"),
  ].filter(Boolean) as string[];
  for (const bin of candidates) {
    if (!existsSync(bin)) continue;
    const version = natsVersion(bin);
    if (version && compare(version, MIN_VERSION) >= 0) return bin;
    console.error(
      `ignoring ${bin}: version ${version?.join(".") ?? "unknown"} is older than ${MIN_VERSION.join(".")} (per-message TTL and delete markers need 2.11+)`,
    );
    if (bin === process.env.NATS_SERVER_BIN) {
      throw new Error(
        `NATS_SERVER_BIN=${bin} is nats-server ${version?.join(".")}; Cellar needs >= ${MIN_VERSION.join(".")}`,
      );
    }
  }
  console.error("nats-server >= 2.11 not found; installing it into .cache/ (scripts/install-nats-server.sh)");
  const out = execFileSync("bash", [join(ROOT, "scripts/install-nats-server.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const bin = out.trim().split("\n").pop()!;
  const version = natsVersion(bin);
  if (!version || compare(version, MIN_VERSION) < 0)
    throw new Error(`installed nats-server ${version?.join(".")} is older than 2.11`);
  return bin;
}

export interface RunningNats {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** The deployed NATS configuration (compose and `npm run dev`): limits, JetStream, per-app users. */
export const DEPLOY_NATS_CONF = join(ROOT, "deploy/nats/nats.conf");
/** The per-app users of DEPLOY_NATS_CONF alone: what each cluster node includes. */
export const DEPLOY_NATS_USERS_CONF = join(ROOT, "deploy/nats/users.conf");

/**
 * Starts nats-server with JetStream on 127.0.0.1. Default: the deployed limits and JetStream
 * settings (deploy/nats/server.conf) without users, for tests, whose per-file stream namespaces
 * the per-app permissions cannot name. `configFile` runs a whole deployed config instead
 * (`npm run dev`, test/deploy.test.ts), with `env` carrying the passwords it references.
 */
export async function startNatsServer(opts: {
  storeDir: string;
  port?: number;
  quiet?: boolean;
  configFile?: string;
  env?: Record<string, string>;
  args?: string[];
}): Promise<RunningNats> {
  const bin = findNatsServer();
  const port = opts.port ?? (await freePort());
  mkdirSync(opts.storeDir, { recursive: true });
  let confPath = opts.configFile;
  if (!confPath) {
    confPath = join(opts.storeDir, "nats.conf");
    // nats-server resolves `include` relative to the including file only.
    writeFileSync(
      confPath,
      `include ${JSON.stringify(relative(opts.storeDir, join(ROOT, "deploy/nats/server.conf")))}\n`,
    );
  }
  const args = ["-c", confPath, "-sd", opts.storeDir, "-a", "127.0.0.1", "-p", String(port), ...(opts.args ?? [])];
  const child = spawn(bin, args, {
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", opts.quiet ? "ignore" : "inherit", opts.quiet ? "ignore" : "inherit"],
  });
  let exited = false;
  child.once("exit", () => (exited = true));
  await waitForPort(port);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    process: child,
    stop: () =>
      new Promise((res) => {
        if (exited) return res();
        child.once("exit", () => res());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }),
  };
}

function natsVersion(bin: string): number[] | null {
  try {
    const out = execFileSync(bin, ["--version"], { encoding: "utf8" });
    const m = out.match(/v?(\d+)\.(\d+)\.(\d+)/);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
  } catch {
    return null;
  }
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

function which(cmd: string): string | undefined {
  try {
    return execFileSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}
