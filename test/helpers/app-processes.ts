import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { freePort, waitForPort } from "../../scripts/infra/ports";

const ROOT = join(import.meta.dir, "../..");

export interface AppProcess {
  child: ChildProcess;
  output: string[];
}

/**
 * The apps as separate processes, as containers run them (`bun run apps/<name>/src/main.ts`), on
 * one database and the test's NATS, with a 1 s maturation window and loopback webhook
 * destinations allowed. `start` also runs another script with the same environment (a fixture).
 */
export async function startAppProcesses(databaseUrl: string, names: string[]) {
  const [ingestPort, platformPort] = [await freePort(), await freePort()];
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NATS_URL: process.env.NATS_URL!,
    INGEST_PORT: String(ingestPort),
    PLATFORM_PORT: String(platformPort),
    PROCESSOR_PORT: "0",
    DISPATCHER_PORT: "0",
    MATURATION_WINDOW_SECONDS: "1",
    SECRET_ENCRYPTION_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
    WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8",
    LOG_LEVEL: "warn",
  };
  const apps = new Map<string, AppProcess>();
  const start = (name: string, script = join(ROOT, `apps/${name}/src/main.ts`)) => {
    const child = spawn(process.execPath, ["run", script], { env, stdio: ["ignore", "pipe", "pipe"] });
    const output: string[] = [];
    child.stdout!.on("data", (c) => output.push(String(c)));
    child.stderr!.on("data", (c) => output.push(String(c)));
    apps.set(name, { child, output });
    return child;
  };
  for (const name of names) start(name);
  await Promise.all([
    names.includes("ingest") ? waitForPort(ingestPort, 30_000) : null,
    names.includes("platform") ? waitForPort(platformPort, 30_000) : null,
  ]);
  return {
    apps,
    start,
    ingestUrl: `http://127.0.0.1:${ingestPort}`,
    platformUrl: `http://127.0.0.1:${platformPort}/api/v1`,
    /** Resolves once the process has exited (at once if it already has). */
    exited: (child: ChildProcess) =>
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => child.once("exit", () => resolve())),
    killAll() {
      for (const { child } of apps.values())
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
