import { join } from "node:path";
import { freePort, waitForPort } from "../../scripts/infra/ports";
import { ROOT, run, type Running } from "./compose";

/** Apps that answer HTTP: `start` waits until their port listens. */
const HTTP_PORT_VAR: Record<string, string> = { ingest: "INGEST_PORT", platform: "PLATFORM_PORT" };

export interface StartOptions {
  /** The name it is known by (kill, output); default the app's. A second instance needs its own. */
  name?: string;
  /** Environment on top of the shared one (another port, a limit). */
  env?: Record<string, string>;
  /** Another entry point with the same environment (a fixture standing in for the app). */
  script?: string;
}

export type AppProcesses = Awaited<ReturnType<typeof startAppProcesses>>;

/**
 * The apps as separate processes, as containers and `npm run dev` run them (`bun run
 * apps/<app>/src/main.ts`), on one database and the test run's NATS: a 1 s maturation window,
 * loopback webhook destinations allowed, the ingest URL the DSNs carry set to the real one.
 * Every end-to-end test that runs the apps as processes starts them here; `env` adds to the
 * shared environment, and each app can be killed, restarted and its log read.
 */
export async function startAppProcesses(
  databaseUrl: string,
  names: string[],
  opts: { env?: Record<string, string> } = {},
) {
  const [ingestPort, platformPort] = [await freePort(), await freePort()];
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: databaseUrl,
    NATS_URL: process.env.NATS_URL!,
    INGEST_PORT: String(ingestPort),
    // Any free port: other test runs share this machine (and a second ingest instance this file).
    INGEST_GRPC_PORT: "0",
    PLATFORM_PORT: String(platformPort),
    INGEST_PUBLIC_URL: ingestUrl,
    // Ops ports of the processor and dispatcher: any free one (other runs share this machine).
    PROCESSOR_PORT: "0",
    DISPATCHER_PORT: "0",
    MATURATION_WINDOW_SECONDS: "1",
    SECRET_ENCRYPTION_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
    WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8",
    LOG_LEVEL: "warn",
    ...opts.env,
  };
  const apps = new Map<string, Running>();

  const start = async (app: string, o: StartOptions = {}): Promise<Running> => {
    const name = o.name ?? app;
    const appEnv = { ...env, ...o.env };
    const proc = run(name, [process.execPath, "run", o.script ?? join(ROOT, `apps/${app}/src/main.ts`)], appEnv);
    apps.set(name, proc);
    const portVar = o.script ? undefined : HTTP_PORT_VAR[app];
    if (portVar)
      await waitForPort(Number(appEnv[portVar]), 60_000).catch((err) => {
        throw new Error(`${name} did not listen: ${err}\n${proc.output()}`);
      });
    return proc;
  };
  /** Stops one app (SIGKILL unless told) and waits for it to exit; its exit code. */
  const kill = async (name: string, signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> => {
    const proc = apps.get(name);
    if (!proc) return null;
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
    return proc.exited;
  };

  await Promise.all(names.map((name) => start(name)));
  return {
    env,
    apps,
    ingestUrl,
    platformUrl: `http://127.0.0.1:${platformPort}/api/v1`,
    start,
    kill,
    /** What the app printed (its last 20,000 characters). */
    output: (name: string) => apps.get(name)?.output() ?? "",
    /** Stops every app; their exit codes, in start order. */
    stop: (signal: NodeJS.Signals = "SIGKILL") => Promise.all([...apps.keys()].map((name) => kill(name, signal))),
  };
}
