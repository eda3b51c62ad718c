/**
 * The system under test for the chaos run: a 3-node NATS cluster, one Postgres and N instances
 * of each app as real processes (`bun run apps/<app>/src/main.ts`), each of which can be killed,
 * paused and restarted in place.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { runMigrations } from "@cellar/shared/db/client";
import { startNatsCluster, type RunningNatsCluster } from "../../scripts/infra/nats-cluster";
import { startEmbeddedPostgres, type RunningPostgres } from "../../scripts/infra/postgres";
import { freePort } from "../../scripts/infra/ports";
import { processState, processTree, signalProcess, stopChild, waitForExit } from "../../scripts/infra/processes";

const ROOT = resolve(import.meta.dir, "../..");
export const APP_NAMES = ["ingest", "platform", "processor", "dispatcher"] as const;
export type AppName = (typeof APP_NAMES)[number];

export interface AppInstance {
  app: AppName;
  /** `ingest-1`, `processor-2`, ... */
  id: string;
  /** The HTTP port: the API for ingest and platform, /health + /ready for the others. */
  port: number;
  url: string;
  process?: ChildProcess;
}

export interface SystemOptions {
  dir: string;
  instances: number;
  windowSeconds: number;
  secretKey: string;
  env?: Record<string, string>;
}

export class ChaosSystem {
  nats!: RunningNatsCluster;
  pg!: RunningPostgres;
  databaseUrl!: string;
  apps: AppInstance[] = [];
  private env: Record<string, string> = {};
  private pgPaused: number[] = [];

  constructor(private opts: SystemOptions) {}

  async start(): Promise<void> {
    mkdirSync(join(this.opts.dir, "logs"), { recursive: true });
    this.nats = await startNatsCluster({ storeDir: join(this.opts.dir, "nats") });
    await this.nats.waitHealthy();
    // Commit times let the ledger order writes against maturations: a write's ingested_at is its
    // transaction's start, which a stalled (SIGSTOPped) processor can commit 35 s later.
    this.pg = await startEmbeddedPostgres({
      dataDir: join(this.opts.dir, "pg"),
      persistent: true,
      settings: { track_commit_timestamp: "on" },
    });
    const admin = postgres(this.pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe("create database cellar");
    await admin.end();
    this.databaseUrl = this.pg.databaseUrl("cellar");
    await runMigrations(this.databaseUrl);
    this.env = {
      ...(process.env as Record<string, string>),
      NATS_URL: this.nats.url,
      NATS_REPLICAS: "3",
      DATABASE_URL: this.databaseUrl,
      INGEST_GRPC_PORT: "0", // no fixed 4317 for several ingest instances on one machine
      SECRET_ENCRYPTION_KEY: this.opts.secretKey,
      MATURATION_WINDOW_SECONDS: String(this.opts.windowSeconds),
      WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8",
      // 5 s -> 10 ms, 5 min -> 0.6 s, 30 min -> 3.6 s: retries finish within the run.
      WEBHOOK_RETRY_TIME_SCALE: "0.002",
      WEBHOOK_TIMEOUT_SECONDS: "5",
      INGEST_RATE_LIMIT_PER_SECOND: "0",
      LOG_LEVEL: "warn",
      ...this.opts.env,
    };
    for (const app of APP_NAMES) {
      for (let i = 1; i <= this.opts.instances; i++) {
        const port = await freePort();
        this.apps.push({ app, id: `${app}-${i}`, port, url: `http://127.0.0.1:${port}` });
      }
    }
    // One at a time for the first boot: migrations and topology creation then race nothing.
    for (const a of this.apps) await this.launch(a);
    await Promise.all(this.apps.map((a) => this.waitReady(a)));
  }

  instances(app: AppName): AppInstance[] {
    return this.apps.filter((a) => a.app === app);
  }

  private async launch(a: AppInstance): Promise<void> {
    const spare = await freePort();
    const env = {
      ...this.env,
      INGEST_PORT: String(a.app === "ingest" ? a.port : spare),
      PLATFORM_PORT: String(a.app === "platform" ? a.port : spare + 1),
      HEALTH_PORT: String(a.port),
    };
    const log = createWriteStream(join(this.opts.dir, "logs", `${a.id}.log`), { flags: "a" });
    const child = spawn(process.execPath, ["run", join(ROOT, `apps/${a.app}/src/main.ts`)], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    a.process = child;
    child.once("exit", () => {
      if (a.process === child) a.process = undefined;
    });
  }

  /**
   * Polls the instance's /ready until it answers 200. A process that exits while starting (a port
   * taken by someone else between freePort and bind, on a shared machine) is started again on a
   * new port, twice at most, as an orchestrator would.
   */
  async waitReady(a: AppInstance, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let relaunches = 0;
    while (Date.now() < deadline) {
      if (!a.process) {
        if (relaunches++ >= 2) throw new Error(`${a.id} exited before it was ready (see logs/${a.id}.log)`);
        a.port = await freePort();
        a.url = `http://127.0.0.1:${a.port}`;
        await this.launch(a);
      }
      if (await this.isReady(a)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${a.id} not ready within ${timeoutMs} ms`);
  }

  async isReady(a: AppInstance): Promise<boolean> {
    return (await this.probe(a)).ok;
  }

  /** One /ready call: its answer (or why none), and how long it took. */
  async probe(a: AppInstance): Promise<{ ok: boolean; ms: number; why: string }> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    if (!a.process) return { ok: false, ms: 0, why: "no process" };
    try {
      const res = await fetch(`${a.url}/ready`, { signal: AbortSignal.timeout(3_000) });
      const body = await res.text();
      if (res.status === 200) return { ok: true, ms: ms(), why: "" };
      return { ok: false, ms: ms(), why: `${res.status} ${body.slice(0, 80)}` };
    } catch (err) {
      return { ok: false, ms: ms(), why: String((err as Error)?.name ?? err) };
    }
  }

  /** The app's log lines since `sinceMs` (epoch) that say why it was not ready or lost NATS. */
  readinessLog(a: AppInstance, sinceMs: number, max = 4): string[] {
    let text = "";
    try {
      text = readFileSync(join(this.opts.dir, "logs", `${a.id}.log`), "utf8");
    } catch {
      return [];
    }
    return text
      .split("\n")
      .filter((line) => /not ready|NATS (dis|re)connected|failed; retrying/.test(line))
      .filter((line) => {
        const at = Date.parse(line.match(/"t":"([^"]+)"/)?.[1] ?? "");
        return !Number.isFinite(at) || at >= sinceMs;
      })
      .slice(-max);
  }

  async killApp(a: AppInstance): Promise<void> {
    const p = a.process;
    if (!p) return;
    signalProcess(p.pid, "SIGCONT");
    p.kill("SIGKILL");
    await waitForExit(p);
  }

  async restartApp(a: AppInstance): Promise<void> {
    await this.killApp(a);
    await this.launch(a);
  }

  pauseApp(a: AppInstance): void {
    signalProcess(a.process?.pid, "SIGSTOP");
  }

  resumeApp(a: AppInstance): void {
    signalProcess(a.process?.pid, "SIGCONT");
  }

  /** SIGSTOP of the postmaster and every backend: connections stay open, nothing answers. */
  async pausePostgres(): Promise<void> {
    const pid = this.pg.pid();
    if (!pid) throw new Error("postgres is not running");
    this.pgPaused = processTree(pid);
    for (const p of this.pgPaused) signalProcess(p, "SIGSTOP");
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && this.pgPaused.some((p) => !["T", null].includes(processState(p))))
      await new Promise((r) => setTimeout(r, 10));
  }

  resumePostgres(): void {
    for (const p of this.pgPaused) signalProcess(p, "SIGCONT");
    this.pgPaused = [];
  }

  /** Fast shutdown (SIGINT: active transactions rolled back) and a start on the same data. */
  async restartPostgres(downMs: number): Promise<void> {
    await this.pg.stop();
    await new Promise((r) => setTimeout(r, downMs));
    await this.pg.start();
  }

  /** The NATS node that leads `stream` (its index in the cluster), or 0. */
  async streamLeader(stream: string): Promise<number> {
    const { connect } = await import("@nats-io/transport-node");
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const nc = await connect({ servers: this.nats.url.split(","), timeout: 3_000 });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(stream);
      const i = this.nats.nodes.findIndex((n) => n.name === info.cluster?.leader);
      return Math.max(0, i);
    } finally {
      await nc.close();
    }
  }

  /**
   * The INGEST consumers that hold work (pending, in hand, pull requests waiting): where a
   * canary that is accepted but not stored is stuck. One line; "" when nothing is held.
   */
  async ingestBacklog(): Promise<string> {
    const { connect } = await import("@nats-io/transport-node");
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const nc = await connect({ servers: this.nats.url.split(","), timeout: 3_000 });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 3_000 });
      const held: string[] = [];
      for await (const c of jsm.consumers.list("INGEST")) {
        if (c.num_pending + c.num_ack_pending === 0) continue;
        held.push(
          `${c.name.replace("processor-ingest", "")}: ${c.num_pending} pending/${c.num_ack_pending} in hand/${c.num_waiting} pulls (leader ${c.cluster?.leader ?? "?"})`,
        );
      }
      return held.join(", ");
    } catch (err) {
      return `INGEST consumers unreadable: ${String((err as Error)?.message ?? err)}`;
    } finally {
      await nc.close();
    }
  }

  async stop(): Promise<void> {
    this.resumePostgres();
    await Promise.all(
      this.apps.map(async (a) => {
        const p = a.process;
        if (!p) return;
        signalProcess(p.pid, "SIGCONT"); // a paused app cannot act on SIGTERM
        await stopChild(p, 8_000);
      }),
    );
    await Promise.allSettled([this.nats?.stop(), this.pg?.stop()]);
  }
}
