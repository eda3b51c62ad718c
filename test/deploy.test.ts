/**
 * docker-compose.yml, run without a container engine: every service's command and environment
 * with local binaries (the real nats-server with the compose's NATS config, embedded Postgres for
 * the postgres image, `bun` for the app image), dependencies started in order and every health
 * check compose would run waited for. Then a trace goes through to a transcript and a webhook,
 * the NATS users are probed for what they must not do, and every app's /metrics is scraped
 * before and after the traffic.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { connect } from "@nats-io/transport-node";
import { freePort } from "../scripts/infra/ports";
import { asArgs, envOf, niceForCpuShares, ROOT, run } from "./helpers/compose";
import {
  APP_PORTS,
  baseEnv,
  bunArgv,
  metricSample,
  publishAsNatsAdmin,
  startComposeStack,
  startReceiver,
  traceThrough,
  type ComposeStack,
} from "./helpers/compose-stack";
import { waitFor } from "./helpers/stack";

let stack: ComposeStack;
const receiver = startReceiver();
beforeAll(async () => {
  stack = await startComposeStack();
}, 180_000);
afterAll(async () => {
  receiver.stop();
  await stack?.stop();
});

const url = (containerPort: number, path: string) => stack.url(containerPort, path);

const sample = metricSample;
const scrape = async (app: keyof typeof APP_PORTS) => {
  const r = await fetch(url(APP_PORTS[app], "/metrics"));
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/plain");
  return r.text();
};

describe("the compose stack", () => {
  test("publishes only the ingest and platform ports; NATS and Postgres stay internal", () => {
    const published = Object.entries(stack.compose.services)
      .filter(([, s]) => s.ports?.length && !s.profiles?.length)
      .map(([n]) => n)
      .sort();
    expect(published).toEqual(["ingest", "platform"]);
    for (const name of ["ingest", "platform", "processor", "dispatcher"]) {
      expect(stack.compose.services[name].restart).toBe("unless-stopped");
      expect(JSON.stringify(stack.compose.services[name].healthcheck?.test)).toContain("/ready");
      expect(envOf(stack.compose.services[name]).NATS_USER).toBe(name);
    }
  });

  test("ingest and NATS get the CPU first: Postgres, the processor and the dispatcher run at their cpu_shares' nice level", () => {
    const own = getPriority();
    const pid = (name: string) => (name === "postgres" ? stack.pg.pid() : stack.running.get(name)?.child.pid);
    const names = ["nats", "postgres", "ingest", "platform", "processor", "dispatcher"];
    const levels = Object.fromEntries(names.map((n) => [n, getPriority(pid(n)!) - own]));
    // 110 shares is nice 10, relative to this test's own level (19 at most: a niced test run).
    const low = Math.min(19, own + 10) - own;
    expect(levels).toEqual({ nats: 0, postgres: low, ingest: 0, platform: 0, processor: low, dispatcher: low });
    expect(niceForCpuShares(stack.compose.services.processor.cpu_shares)).toBe(10);
  });

  test(".env.example names every variable docker-compose.yml reads", () => {
    const read = new Set(
      [...readFileSync(join(ROOT, "docker-compose.yml"), "utf8").matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]),
    );
    const example = new Set(
      [...readFileSync(join(ROOT, ".env.example"), "utf8").matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]),
    );
    expect([...read].filter((v) => !example.has(v))).toEqual([]);
    expect(read.size).toBeGreaterThan(10);
  });

  test("the optional Prometheus scrapes every app's /metrics port", () => {
    const prometheus = stack.compose.services.prometheus;
    expect(prometheus?.profiles).toEqual(["monitoring"]);
    const config = Bun.YAML.parse(readFileSync(join(ROOT, "deploy/prometheus/prometheus.yml"), "utf8")) as {
      scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }>;
    };
    const targets = config.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets)).sort();
    expect(targets).toEqual(
      Object.entries(APP_PORTS)
        .map(([app, port]) => `${app}:${port}`)
        .sort(),
    );
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
    const appUser = stack.env.APP_DATABASE_USER;
    const sql = postgres(stack.pg.databaseUrl("cellar"), { max: 1, onnotice: () => {} });
    try {
      const [role] = await sql`select rolsuper, rolcreatedb, rolcreaterole from pg_roles where rolname = ${appUser}`;
      expect(role).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
      const users =
        await sql`select distinct usename from pg_stat_activity where application_name like 'cellar-%' and datname = 'cellar'`;
      expect(users.map((u) => u.usename)).toEqual([appUser]);
      const owned =
        await sql`select count(*)::int as n from pg_tables where schemaname = 'public' and tableowner = ${appUser}`;
      expect(owned[0].n).toBe(0);
    } finally {
      await sql.end();
    }
  });

  test("a trace goes through to a transcript and a signed webhook, and the metrics move", async () => {
    const before = {
      ingest: await scrape("ingest"),
      platform: await scrape("platform"),
      processor: await scrape("processor"),
      dispatcher: await scrape("dispatcher"),
    };
    const { ingestAnswer, transcript, webhookType } = await traceThrough(stack, receiver, "deploy-1");
    expect(ingestAnswer).toEqual({ status: "success" });
    expect(transcript.items.map((i: { type: string; content: string }) => [i.type, i.content])).toEqual([
      ["user", "Is the stack up?"],
      ["assistant", "It is."],
    ]);
    expect(webhookType).toBe("session.matured");

    // Each app's figures moved with the traffic.
    const after = await waitFor(
      async () => {
        const m = {
          ingest: await scrape("ingest"),
          platform: await scrape("platform"),
          processor: await scrape("processor"),
          dispatcher: await scrape("dispatcher"),
        };
        return sample(m.dispatcher, "cellar_webhook_attempts_total", { outcome: "delivered" }) >= 1 &&
          sample(m.processor, "cellar_maturation_lateness_seconds_count") >= 1
          ? m
          : null;
      },
      { what: "metrics after traffic", timeoutMs: 15_000 },
    );
    const traces = { route: "/raw/traces", method: "POST", status: "200" };
    expect(
      sample(after.ingest, "cellar_http_requests_total", traces) -
        sample(before.ingest, "cellar_http_requests_total", traces),
    ).toBe(1);
    expect(sample(after.ingest, "cellar_http_request_duration_seconds_count", traces)).toBe(1);
    const transcriptRoute = {
      route: "/api/v1/telemetry/otel/sessions/:serviceName/:sessionId/transcript",
      status: "200",
    };
    expect(sample(after.platform, "cellar_http_requests_total", transcriptRoute)).toBeGreaterThanOrEqual(1);
    expect(
      sample(after.platform, "cellar_http_requests_total", {
        route: "/api/v1/webhooks",
        method: "POST",
        status: "201",
      }),
    ).toBe(1);
    expect(
      sample(after.processor, "cellar_maturations_total", { kind: "session", outcome: "matured" }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(before.processor, "cellar_maturations_total", { kind: "session", outcome: "matured" })).toBe(0);
    expect(sample(after.dispatcher, "cellar_webhook_attempts_total", { outcome: "delivered" })).toBeGreaterThanOrEqual(
      1,
    );
    // Consumer state from JetStream: every consumer reported, nothing left unacked once settled.
    for (const [app, consumers] of [
      ["processor", ["processor-ingest", "processor-ingest-00", "processor-ingest-15", "processor-activity"]],
      [
        "dispatcher",
        ["dispatcher-matured-00", "dispatcher-matured-15", "dispatcher-deliveries-00", "dispatcher-deliveries-15"],
      ],
    ] as const) {
      for (const consumer of consumers) expect(sample(after[app], "cellar_consumer_info_up", { consumer })).toBe(1);
      expect(after[app]).toContain(`cellar_consumer_pending{stream=`);
    }
    const settled = await waitFor(
      async () => {
        const m = await scrape("processor");
        const ingest = [
          "processor-ingest",
          ...Array.from({ length: 16 }, (_, i) => `processor-ingest-${String(i).padStart(2, "0")}`),
        ];
        return ingest.every(
          (consumer) =>
            sample(m, "cellar_consumer_ack_pending", { consumer }) === 0 &&
            sample(m, "cellar_consumer_pending", { consumer }) === 0,
        )
          ? m
          : null;
      },
      { what: "processor-ingest and its lanes drained" },
    );
    expect(settled).toContain("cellar_consumer_redelivered");
    expect(sample(after.processor, "cellar_dead_letters", { stream: "INGEST" })).toBe(0);
    for (const stream of ["MATURED", "DELIVERIES"])
      expect(sample(after.dispatcher, "cellar_dead_letters", { stream })).toBe(0);
    for (const app of Object.keys(APP_PORTS) as Array<keyof typeof APP_PORTS>) {
      expect(sample(after[app], "cellar_postgres_pool_max")).toBeGreaterThan(0);
      expect(after[app]).toContain("cellar_postgres_pool_connections{");
    }
    // The Grafana dashboard asks only for series the apps really export.
    const dashboard = readFileSync(join(ROOT, "deploy/grafana/cellar-dashboard.json"), "utf8");
    const asked = [...new Set([...dashboard.matchAll(/\b(cellar_[a-z_]+)\b/g)].map((m) => m[1]))];
    const exported = Object.values(after).join("\n");
    expect(asked.length).toBeGreaterThan(5);
    for (const name of asked)
      expect({ name, exported: exported.includes(`\n${name}{`) || exported.includes(`\n${name} `) }).toEqual({
        name,
        exported: true,
      });
  }, 90_000);
});

test("a message the processor cannot use is dead-lettered under its own user, and counted", async () => {
  await publishAsNatsAdmin(stack, "ingest.trace", "this is not JSON");
  await waitFor(async () => sample(await scrape("processor"), "cellar_dead_letters", { stream: "INGEST" }) === 1, {
    what: "the dead letter counted",
    timeoutMs: 15_000,
  });
  expect(stack.running.get("processor")!.child.exitCode).toBeNull();
  // The operator lists it with the admin CLI as the NATS admin user.
  const cli = run("admin-dead-letters", [process.execPath, "run", "scripts/admin.ts", "dead-letters", "list"], {
    ...baseEnv(),
    NATS_URL: `nats://127.0.0.1:${stack.local.port(4222)}`,
    NATS_USER: "admin",
    NATS_PASSWORD: stack.env.NATS_ADMIN_PASSWORD,
  });
  expect(await cli.exited).toBe(0);
  const listed = JSON.parse(
    cli
      .output()
      .trim()
      .split("\n")
      .find((l) => l.startsWith("{"))!,
  );
  expect(listed.deadLetters.map((d: { stream: string; subject: string }) => [d.stream, d.subject])).toEqual([
    ["INGEST", "ingest.trace"],
  ]);
}, 30_000);

describe("NATS is locked down", () => {
  const natsUrl = () => `nats://127.0.0.1:${stack.local.port(4222)}`;

  test("a connection without credentials is refused", async () => {
    await expect(connect({ servers: natsUrl(), reconnect: false })).rejects.toThrow(/authorization/i);
  });

  test("the ingest user cannot read telemetry or forge MATURED events", async () => {
    const nc = await connect({
      servers: natsUrl(),
      user: "ingest",
      pass: stack.env.NATS_INGEST_PASSWORD,
      inboxPrefix: "_INBOX.ingest",
      reconnect: false,
    });
    try {
      const errors: string[] = [];
      (async () => {
        for await (const s of nc.status())
          if (s.type === "error") errors.push(String((s as { error?: Error }).error?.message ?? ""));
      })();
      const sub = nc.subscribe("ingest.>");
      const closed = sub.closed.catch((err: Error) => err.message);
      nc.publish("matured.session", JSON.stringify({ type: "session.matured" }));
      await nc.flush();
      expect(String(await closed)).toMatch(/permission/i);
      await waitFor(async () => errors.some((e) => /publish.*matured\.session/i.test(e)), {
        what: "the server's publish permission violation",
        timeoutMs: 5_000,
      });
      // Its reply inbox is its own: another app's inbox is off limits.
      const other = nc.subscribe("_INBOX.processor.>");
      expect(String(await other.closed.catch((err: Error) => err.message))).toMatch(/permission/i);
    } finally {
      await nc.close();
    }
    // Nothing reached MATURED.
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const adminNc = await connect({
      servers: natsUrl(),
      user: "admin",
      pass: stack.env.NATS_ADMIN_PASSWORD,
      reconnect: false,
    });
    const jsm = await jetstreamManager(adminNc);
    const matured = await jsm.streams.info("MATURED");
    const forged =
      matured.state.messages > 0
        ? await jsm.streams.getMessage("MATURED", { last_by_subj: "matured.session" }).catch(() => null)
        : null;
    expect(forged?.string() ?? "").not.toBe(JSON.stringify({ type: "session.matured" }));
    await adminNc.close();
  });

  test("no app may publish what another app owns, nor change the topology", async () => {
    const forbidden: Array<[user: string, subject: string]> = [
      ["processor", "deliveries.attempt"],
      ["processor", "ingest.trace"],
      ["processor", "$JS.API.STREAM.DELETE.INGEST"],
      ["dispatcher", "matured.session"],
      ["dispatcher", "ingest.event"],
      ["dispatcher", "$JS.API.CONSUMER.DELETE.INGEST.processor-ingest"],
      ["dispatcher", "$JS.API.CONSUMER.DELETE.MATURED.dispatcher-matured-00"],
      ["dispatcher", "$JS.API.CONSUMER.CREATE.DELIVERIES.dispatcher-deliveries-16"],
      ["platform", "matured.trace"],
      ["platform", "ingest.anything"],
      ["platform", "deadletter.ingest"],
      ["platform", "$JS.API.STREAM.PURGE.DEAD_LETTERS"],
      ["platform", "$JS.API.STREAM.PURGE.DELIVERIES"],
      ["ingest", "deliveries.attempt"],
      ["ingest", "$JS.API.STREAM.UPDATE.INGEST"],
    ];
    for (const [user, subject] of forbidden) {
      const nc = await connect({
        servers: natsUrl(),
        user,
        pass: stack.env[`NATS_${user.toUpperCase()}_PASSWORD`],
        inboxPrefix: `_INBOX.${user}`,
        reconnect: false,
      });
      const errors: string[] = [];
      (async () => {
        for await (const s of nc.status())
          if (s.type === "error") errors.push(String((s as { error?: Error }).error?.message ?? ""));
      })();
      nc.publish(subject, "{}");
      await nc.flush();
      await waitFor(
        async () => errors.some((e) => e.toLowerCase().includes("permissions violation") && e.includes(subject)),
        { what: `${user} refused ${subject}`, timeoutMs: 5_000 },
      );
      await nc.close();
    }
  }, 60_000);

  test("an app with another app's user, a wrong password, or set up to migrate as the app role stops at once saying what to fix", async () => {
    const ingestEnv = stack.local.env(envOf(stack.compose.services.ingest));
    const wrong = run("ingest-as-platform", bunArgv(asArgs(stack.compose.services.ingest.command)), {
      ...baseEnv(),
      ...ingestEnv,
      INGEST_PORT: String(await freePort()),
      NATS_USER: "platform",
      NATS_PASSWORD: stack.env.NATS_PLATFORM_PASSWORD,
    });
    expect(await Promise.race([wrong.exited, Bun.sleep(20_000).then(() => -1)])).toBe(1);
    expect(wrong.output()).toContain('NATS user "platform" may not read stream INGEST');

    const badPassword = run("ingest-bad-password", bunArgv(asArgs(stack.compose.services.ingest.command)), {
      ...baseEnv(),
      ...ingestEnv,
      INGEST_PORT: String(await freePort()),
      NATS_PASSWORD: "wrong",
    });
    expect(await Promise.race([badPassword.exited, Bun.sleep(20_000).then(() => -1)])).toBe(1);
    expect(badPassword.output()).toMatch(/refused user "ingest".*NATS_USER and NATS_PASSWORD/);

    // Set up at start as the apps' role: it may not run migrations, and says what to do instead.
    const setup = run("ingest-setup-on-start", bunArgv(asArgs(stack.compose.services.ingest.command)), {
      ...baseEnv(),
      ...ingestEnv,
      INGEST_PORT: String(await freePort()),
      SETUP_ON_START: "true",
    });
    expect(await Promise.race([setup.exited, Bun.sleep(20_000).then(() => -1)])).toBe(1);
    expect(setup.output()).toContain("may not apply migrations");
    expect(setup.output()).toContain("SETUP_ON_START=false");
  }, 45_000);
});

test("with NATS unresponsive every app answers /ready 503 naming nats (and /health 200), and is ready again once it answers", async () => {
  const nats = stack.running.get("nats")!.child;
  nats.kill("SIGSTOP");
  try {
    for (const [app, port] of Object.entries(APP_PORTS)) {
      // Ingest holds a second NATS connection for large INGEST messages (the bulk lane, issue 41)
      // and is ready only while both are up; each connection notices the stall on its own ping.
      const expected =
        app === "ingest"
          ? {
              error: "not ready: nats, nats-bulk",
              checks: { postgres: "ok", nats: "failing", "nats-bulk": "failing" },
            }
          : { error: "not ready: nats", checks: { postgres: "ok", nats: "failing" } };
      let last: unknown = null;
      await waitFor(
        async () => {
          const res = await fetch(url(port, "/ready"));
          last = res.status === 503 ? await res.json() : `status ${res.status}`;
          return Bun.deepEquals(last, expected);
        },
        { what: `${app} not ready`, timeoutMs: 10_000 },
      ).catch(() => undefined);
      expect(last).toEqual(expected);
      expect((await fetch(url(port, "/health"))).status).toBe(200);
    }
  } finally {
    nats.kill("SIGCONT");
  }
  for (const [app, port] of Object.entries(APP_PORTS)) {
    await waitFor(async () => (await fetch(url(port, "/ready"))).status === 200, {
      what: `${app} ready again`,
      timeoutMs: 15_000,
    });
  }
}, 60_000);
