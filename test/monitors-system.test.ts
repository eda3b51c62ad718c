// Monitors end to end with the four apps as separate processes (docs/monitors.md): a monitor on
// latency p95 and one on a score's mean fire exactly one signed monitor.triggered when pushed over
// their threshold, nothing while they stay over or flap inside the hysteresis band, one
// monitor.resolved when back under; a processor killed between the state change and its publish
// neither loses nor duplicates the notification. Signatures are checked with svix, a Standard
// Webhooks implementation independent of ours.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Webhook } from "svix";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { DEFINITIONS_CACHE_MS } from "../apps/processor/src/monitors/consumer";
import { startAppProcesses } from "./helpers/app-processes";
import { createTestDatabase } from "./helpers/infra";
import { startRecordingReceiver } from "./helpers/receiver";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";
import { platformClient } from "./helpers/platform-client";

const ROOT = join(import.meta.dir, "..");
const SERVICE = "mon-app";
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: Awaited<ReturnType<typeof startAppProcesses>>;
let receiver: ReturnType<typeof startRecordingReceiver>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 4 });
  receiver = startRecordingReceiver();
  stack = await startAppProcesses(testDb.url, ["ingest", "platform", "processor", "dispatcher"]);
  tenant = await bootstrapTenant(database.db, { name: "mon", webhooks: true });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  receiver?.stop();
  await database?.close();
  await testDb?.drop();
});

const platform = (path: string, method = "GET", body?: unknown) =>
  platformClient(stack.platformUrl, tenant.platformKey).call(path, method, body);
const ingest = async (path: string, body: unknown) => {
  const res = await fetch(`${stack.ingestUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
};
const session = (sessionId: string, environment: string, durationMs: number) =>
  ingest(
    "/raw/traces",
    chatTrace({
      sessionId,
      serviceName: SERVICE,
      messages: [{ role: "user", content: `question ${sessionId}` }],
      reply: "answer",
      durationMs,
      extra: { environment },
    }),
  );
const samples = async (monitorId: string) =>
  (
    await database.sql<{ n: number }[]>`select count(*)::int as n from monitor_samples where monitor_id = ${monitorId}`
  )[0].n;
const untilSamples = (monitorId: string, n: number) =>
  waitFor(async () => (await samples(monitorId)) >= n, { what: `${n} samples of ${monitorId}`, timeoutMs: 60_000 });
const monitorHooks = (monitorId: string) =>
  receiver.received
    .filter((r) => r.path === "/monitors")
    .map((r) => ({ ...r, event: JSON.parse(r.body) }))
    .filter((r) => r.event.data.monitor_id === monitorId);
const typesOf = (monitorId: string) => monitorHooks(monitorId).map((r) => r.event.type);

test("score mean and latency p95 monitors: one triggered, one resolved, none while over or inside the band, none lost or doubled by a crash", async () => {
  await session("warmup", "warmup", 100);
  const [svc] = await waitFor(async () => {
    const rows = await database.sql<{ id: string }[]>`select id from trace_services where name = ${SERVICE}`;
    return rows.length ? rows : null;
  });
  const subscribe = async (path: string, eventTypes: string[], format?: string) => {
    const r = await platform("/webhooks", "POST", {
      trace_service_id: svc.id,
      name: path,
      url: `http://127.0.0.1:${receiver.port}${path}`,
      event_types: eventTypes,
      ...(format ? { payload_format: format } : {}),
    });
    expect(r.status).toBe(201);
    return r.body.secret as string;
  };
  const secret = await subscribe("/monitors", ["monitor.triggered", "monitor.resolved"]);
  await subscribe("/matured", ["session.matured"]); // an existing-style subscription: gets no monitor event
  const chatSecret = await subscribe("/chat", ["monitor.triggered"], "chat");

  const create = async (def: Record<string, unknown>) => {
    const r = await platform("/monitors", "POST", { service_name: SERVICE, window_seconds: 3600, ...def });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const scoreMonitor = await create({
    name: "helpfulness drops",
    metric: "score_mean",
    metric_arg: "helpfulness",
    filters: { environment: "scores" },
    direction: "below",
    threshold: 0.5,
    hysteresis: 0.2,
  });
  const latencyMonitor = await create({
    name: "slow answers",
    metric: "latency_p95",
    filters: { environment: "latency" },
    threshold: 5000,
    hysteresis: 500,
    min_samples: 2,
  });

  // The processor (its own process) reads monitor definitions at most this stale.
  await Bun.sleep(DEFINITIONS_CACHE_MS + 500);

  // Score mean: each session's score is sent before its trace (kept, then sampled at maturation).
  // Means 0.2 (alert) 0.55 0.467 0.575 0.66 (inside the band, across the threshold) 0.717 (resolved).
  const values = [0.2, 0.9, 0.3, 0.9, 1.0, 1.0];
  for (let i = 0; i < values.length; i++) {
    await ingest("/raw/scores", {
      service_name: SERVICE,
      session_id: `score-${i}`,
      name: "helpfulness",
      value: values[i],
    });
    await waitFor(async () => (await database.sql`select 1 from scores where session_id = ${`score-${i}`}`).length > 0);
    await session(`score-${i}`, "scores", 300);
    await untilSamples(scoreMonitor, i + 1);
    if (i === 0)
      await waitFor(async () => typesOf(scoreMonitor).length === 1, { what: "triggered", timeoutMs: 30_000 });
  }
  await waitFor(async () => typesOf(scoreMonitor).length === 2, { what: "resolved", timeoutMs: 30_000 });
  expect(typesOf(scoreMonitor)).toEqual(["monitor.triggered", "monitor.resolved"]);

  // Latency p95: two slow sessions (min_samples 2) trigger, a third keeps it over: one event.
  for (const [i, n] of [
    [1, 1],
    [2, 2],
    [3, 3],
  ]) {
    await session(`slow-${i}`, "latency", 8000);
    await untilSamples(latencyMonitor, n);
    if (i === 2)
      await waitFor(async () => typesOf(latencyMonitor).length === 1, { what: "triggered", timeoutMs: 30_000 });
  }

  // Fast sessions bring p95 back under; the processor dies right after the resolve commits.
  await stack.kill("processor", "SIGTERM");
  const crashing = (
    await stack.start("processor", {
      name: "processor-crash",
      script: join(ROOT, "test/fixtures/processor-crash-after-monitor-commit.ts"),
    })
  ).child;
  await Promise.all(Array.from({ length: 60 }, (_, i) => session(`fast-${i}`, "latency", 300)));
  await waitFor(async () => crashing.signalCode === "SIGKILL", {
    what: "the crash after the state change",
    timeoutMs: 90_000,
  }).catch(async (err) => {
    const state = await database.sql`select state, transitions from monitors where id = ${latencyMonitor}`;
    const output = stack.output("processor-crash").slice(-2000);
    throw new Error(`${err}; samples ${await samples(latencyMonitor)}; ${JSON.stringify(state)}\n${output}`);
  });
  const [change] = await database.sql<{ event_type: string; published_at: Date | null }[]>`
    select event_type, published_at from monitor_events where monitor_id = ${latencyMonitor} and seq = 2`;
  expect(change).toEqual({ event_type: "monitor.resolved", published_at: null });
  await stack.start("processor");
  await untilSamples(latencyMonitor, 63);
  await waitFor(async () => typesOf(latencyMonitor).length === 2, {
    what: "resolved after the crash",
    timeoutMs: 60_000,
  });
  await waitFor(
    async () =>
      (await database.sql`select 1 from monitor_events where event_type is not null and published_at is null`)
        .length === 0,
    { what: "outbox drained" },
  );
  // Whatever is still on its way has had time to arrive.
  await Bun.sleep(3_000);
  expect(typesOf(latencyMonitor)).toEqual(["monitor.triggered", "monitor.resolved"]);
  expect(typesOf(scoreMonitor)).toEqual(["monitor.triggered", "monitor.resolved"]);

  const verifier = new Webhook(secret);
  for (const hook of [...monitorHooks(scoreMonitor), ...monitorHooks(latencyMonitor)]) {
    const verified = verifier.verify(hook.body, hook.headers) as any;
    expect(verified.id).toBe(hook.headers["webhook-id"]);
    expect(verified.data).toMatchObject({
      tenant_id: tenant.tenantId,
      trace_service_id: svc.id,
      service_name: SERVICE,
    });
  }
  const [triggered, resolved] = monitorHooks(latencyMonitor).map((h) => h.event);
  expect(triggered.data).toMatchObject({
    state: "alert",
    previous_state: "ok",
    metric: "latency_p95",
    threshold: 5000,
  });
  expect(triggered.data.value).toBeGreaterThanOrEqual(5000);
  expect(resolved.data).toMatchObject({ state: "ok", previous_state: "alert", transition: "resolve" });
  expect(resolved.data.value).toBeLessThan(4500);
  expect(
    receiver.received.filter((r) => r.path === "/matured").every((r) => JSON.parse(r.body).type === "session.matured"),
  ).toBe(true);

  // The chat-shaped subscription: one signed {"text"} per triggered monitor, nothing else.
  const chat = receiver.received.filter((r) => r.path === "/chat");
  expect(chat.length).toBe(2);
  for (const hook of chat) {
    expect(Object.keys(JSON.parse(hook.body))).toEqual(["text"]);
    new Webhook(chatSecret).verify(hook.body, hook.headers);
  }
  expect(chat.map((h) => JSON.parse(h.body).text).sort()).toEqual([
    expect.stringContaining('"helpfulness drops" on mon-app is ALERT: score_mean (helpfulness) = 0.2'),
    expect.stringContaining('"slow answers" on mon-app is ALERT: latency_p95'),
  ]);

  // The history and the chart behind the dashboard's monitor page.
  const history = await platform(`/monitors/${latencyMonitor}`);
  expect(history.status).toBe(200);
  expect(history.body.monitor.state).toBe("ok");
  expect(history.body.changes.map((c: any) => c.transition)).toEqual(["resolve", "alert"]);
  expect(history.body.points.length).toBeGreaterThan(0);
}, 300_000);
