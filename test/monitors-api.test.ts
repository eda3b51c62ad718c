// The monitors API (docs/monitors.md): validation naming the field, roles, tenant isolation,
// edits and preview; and a trace monitor evaluated from the stream.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { bootstrapTenant, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { monitorsConsumer } from "@cellar/shared/nats/catalogue";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

let stack: TestStack;
let acme: Awaited<ReturnType<typeof bootstrapTenant>>;
let globex: Awaited<ReturnType<typeof bootstrapTenant>>;
let viewerKey: string;
const SERVICE = "api-app";

const call = async (path: string, token: string, method = "GET", body?: unknown) => {
  const res = await stack.platformRequest(path, {
    method,
    token,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
};
const valid = { service_name: SERVICE, name: "slow", metric: "latency_p95", window_seconds: 600, threshold: 1000 };

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  // Definitions read fresh on every evaluation (production caches them 5 s).
  await stack.startProcessor({ monitors: { definitionsCacheMs: 1 } });
  acme = await bootstrapTenant(stack.database.db, { name: "acme" });
  globex = await bootstrapTenant(stack.database.db, { name: "globex", email: "o@globex.test" });
  const trace = chatTrace({
    sessionId: "seed",
    serviceName: SERVICE,
    messages: [{ role: "user", content: "q" }],
    reply: "a",
  });
  expect(
    (await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${acme.telemetryKey}` })).status,
  ).toBe(200);
  // The seed trace matured and published before any monitor exists: no monitor samples it.
  await waitFor(
    async () =>
      (
        await stack.database
          .sql`select 1 from traces t where exists (select 1 from trace_analyses ta where ta.trace_pk = t.id) and not exists (select 1 from pending_traces p where p.trace_pk = t.id)`
      ).length === 1,
    { what: "the seed trace matured", timeoutMs: 30_000 },
  );
  // ... and the monitors' consumer is past its maturation (a monitor created while it lags
  // would sample the seed trace).
  await waitFor(
    async () => {
      const c = await stack.nats.jsm.consumers.info(
        stack.nats.topology.maturedStream,
        monitorsConsumer.consumer!.durable,
      );
      return c.num_pending + c.num_ack_pending === 0 && c.delivered.stream_seq > 0;
    },
    { what: "the seed trace's maturation read by the monitors", timeoutMs: 30_000 },
  );
  const [project] = await stack.database.sql<
    { id: string }[]
  >`select project_id as id from trace_services where name = ${SERVICE}`;
  const viewer = await createUser(stack.database.db, {
    tenantId: acme.tenantId,
    email: "v@acme.test",
    role: "viewer",
    projectIds: [project.id],
  });
  viewerKey = (await createApiKey(stack.database.db, { kind: "platform", userId: viewer.id })).key;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

test("bad definitions are 400 naming the field and create nothing", async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...valid, metric: "vibes" }, "metric"],
    [{ ...valid, window_seconds: 10 }, "window_seconds"],
    [{ ...valid, window_seconds: 86_401 }, "window_seconds"],
    [{ ...valid, threshold: "high" }, "threshold"],
    [{ ...valid, metric: "score_mean" }, "metric_arg"],
    [{ ...valid, metric_arg: "x" }, "metric_arg"],
    [{ ...valid, metric: "category_share", metric_arg: "nolabel" }, "metric_arg"],
    [{ ...valid, entity: "trace", metric: "problem_rate" }, "metric"],
    [{ ...valid, warning_threshold: 2000 }, "warning_threshold"],
    [{ ...valid, hysteresis: -1 }, "hysteresis"],
    [{ ...valid, min_samples: 0 }, "min_samples"],
    [{ ...valid, filters: { region: "eu" } }, "filters.region"],
    [{ ...valid, extra: 1 }, "extra"],
    [{ ...valid, name: "" }, "name"],
  ];
  for (const [body, field] of cases) {
    const r = await call("/monitors", acme.platformKey, "POST", body);
    expect({ status: r.status, field, error: r.body.error }).toEqual({
      status: 400,
      field,
      error: expect.stringContaining(field),
    });
  }
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), async (body) => {
      const r = await call("/monitors", acme.platformKey, "POST", body);
      expect(r.status).toBe(400);
    }),
    { numRuns: 50 },
  );
  expect((await stack.database.sql`select 1 from monitors`).length).toBe(0);
});

test("roles and tenants: viewers read, members change; another tenant sees nothing", async () => {
  expect((await call("/monitors", viewerKey, "POST", valid)).status).toBe(403);
  const created = await call("/monitors", acme.platformKey, "POST", valid);
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name: "slow", state: "ok", direction: "above", hysteresis: 0, min_samples: 1 });
  const id = created.body.id;
  expect((await call("/monitors", viewerKey)).body.monitors.map((m: any) => m.id)).toEqual([id]);
  expect((await call(`/monitors/${id}`, viewerKey)).status).toBe(200);
  expect((await call(`/monitors/${id}`, viewerKey, "PUT", { threshold: 5 })).status).toBe(403);
  expect((await call(`/monitors/${id}`, globex.platformKey)).status).toBe(404);
  expect((await call(`/monitors/${id}`, globex.platformKey, "DELETE")).status).toBe(404);
  expect((await call("/monitors", globex.platformKey)).body.monitors).toEqual([]);
  expect((await call("/monitors", globex.platformKey, "POST", valid)).status).toBe(404);

  const edited = await call(`/monitors/${id}`, acme.platformKey, "PUT", { threshold: 2000, warning_threshold: 1500 });
  expect(edited.status).toBe(200);
  expect(edited.body).toMatchObject({ threshold: 2000, warning_threshold: 1500, metric: "latency_p95", name: "slow" });
  const bad = await call(`/monitors/${id}`, acme.platformKey, "PUT", { warning_threshold: 2500 });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toContain("warning_threshold");
  expect((await call(`/monitors/${id}`, acme.platformKey, "DELETE")).status).toBe(204);
  expect((await call(`/monitors/${id}`, acme.platformKey)).status).toBe(404);
});

test("a trace monitor is evaluated from the stream; the preview reads the window's history", async () => {
  const created = await call("/monitors", acme.platformKey, "POST", {
    ...valid,
    name: "slow calls",
    entity: "trace",
    metric: "latency_p50",
    threshold: 3000,
    filters: { model: "gpt-4o-mini" },
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  for (const [i, durationMs] of [4000, 5000, 200].entries()) {
    const trace = chatTrace({
      sessionId: `t-${i}`,
      serviceName: SERVICE,
      messages: [{ role: "user", content: "q" }],
      reply: "a",
      durationMs,
    });
    expect(
      (await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${acme.telemetryKey}` })).status,
    ).toBe(200);
  }
  const history = await waitFor(
    async () => {
      const r = await call(`/monitors/${id}`, acme.platformKey);
      return r.body.monitor.last_samples === 3 ? r.body : null;
    },
    { what: "three trace samples", timeoutMs: 30_000 },
  );
  expect(history.monitor.state).toBe("alert");
  expect(history.monitor.last_value).toBe(4000);
  expect(history.changes[0]).toMatchObject({
    transition: "alert",
    from: "ok",
    to: "alert",
    event_type: "monitor.triggered",
  });
  const preview = await call("/monitors/preview", viewerKey, "POST", {
    ...valid,
    entity: "trace",
    metric: "latency_p50",
    threshold: 3000,
    filters: { model: "gpt-4o-mini" },
  });
  // The preview reads every matured trace of the window, the seed trace (800 ms) included, which
  // matured before the monitor existed and so was never sampled by it.
  expect(preview.body).toMatchObject({ value: 2400, samples: 4, state: "ok" });
}, 60_000);
