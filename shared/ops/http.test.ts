import { describe, expect, test } from "bun:test";
import { routeMatcher, withOps } from "./http.ts";
import { createMetrics } from "./metrics.ts";
import { createReadiness } from "./probes.ts";

const routes = [
  { method: "GET", path: "/api/v1/telemetry/otel/sessions/:serviceName/:sessionId/transcript" },
  { method: "GET", path: "/api/v1/webhooks/:id" },
  { method: "POST", path: "/api/v1/webhooks" },
  { method: "GET", path: "/api/v1/webhooks/deliveries" },
  { method: "POST", path: "/raw/traces" },
  { method: "ALL", path: "/raw/traces" },
];

describe("routeMatcher", () => {
  const match = routeMatcher(routes);
  test("labels a path with the declared pattern, static before parameterised", () => {
    expect(match("/api/v1/telemetry/otel/sessions/bot/s-1/transcript")).toBe(
      "/api/v1/telemetry/otel/sessions/:serviceName/:sessionId/transcript",
    );
    expect(match("/api/v1/webhooks/deliveries")).toBe("/api/v1/webhooks/deliveries");
    expect(match("/api/v1/webhooks/123")).toBe("/api/v1/webhooks/:id");
    expect(match("/raw/traces")).toBe("/raw/traces");
  });
  test("anything else is `unmatched`, so clients cannot mint label values", () => {
    expect(match("/api/v1/webhooks/1/2/3")).toBe("unmatched");
    expect(match(`/${crypto.randomUUID()}`)).toBe("unmatched");
    expect(match("/raw/traces.php")).toBe("unmatched");
  });
});

function setup(opts: { ready?: boolean; token?: string; handler?: (r: Request) => Response | Promise<Response> } = {}) {
  const metrics = createMetrics("test");
  const ready = createReadiness(
    {
      postgres: async () => {},
      nats: async () => {
        if (opts.ready === false) throw new Error("connection closed");
      },
    },
    { reuseMs: 0 },
  );
  const fetch = withOps(opts.handler ?? (() => new Response("{}", { status: 201 })), {
    routes: () => routes,
    metrics,
    ready,
    metricsToken: opts.token,
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(new Request(`http://app.test${path}`, { headers }));
  return { metrics, fetch, get };
}

describe("withOps", () => {
  test("/ready is 200 with every check ok, 503 in the contract's error shape naming the failed check but not its reason", async () => {
    const ok = await setup().get("/ready");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "ready", checks: { postgres: "ok", nats: "ok" } });
    const down = await setup({ ready: false }).get("/ready");
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("2");
    expect(await down.json()).toEqual({ error: "not ready: nats", checks: { postgres: "ok", nats: "failing" } });
  });

  test("counts every response by route and status, thrown errors as 500", async () => {
    const { fetch, get, metrics } = setup({
      handler: (r) => {
        if (r.url.endsWith("/boom")) throw new Error("boom");
        return new Response(null, { status: 404 });
      },
    });
    await fetch(new Request("http://app.test/raw/traces", { method: "POST", body: "{}" }));
    await expect(fetch(new Request("http://app.test/boom"))).rejects.toThrow("boom");
    const text = await metrics.registry.metrics();
    expect(text).toContain('cellar_http_requests_total{route="/raw/traces",method="POST",status="404",app="test"} 1');
    expect(text).toContain('cellar_http_requests_total{route="unmatched",method="GET",status="500",app="test"} 1');
    expect(text).toContain(
      'cellar_http_request_duration_seconds_count{app="test",route="/raw/traces",method="POST",status="404"} 1',
    );
    // Bun's Request turns unknown methods into GET; Deno's keeps them: a plain object stands in.
    await fetch({ method: "BREW", url: "http://app.test/raw/traces", headers: new Headers() } as Request);
    expect(await metrics.registry.metrics()).toContain(
      'cellar_http_requests_total{route="/raw/traces",method="OTHER",status="404",app="test"} 1',
    );
    await get("/health");
    expect(await metrics.registry.metrics()).toContain(
      'cellar_http_requests_total{route="/health",method="GET",status="200",app="test"} 1',
    );
  });

  test("/metrics needs the bearer token when METRICS_TOKEN is set", async () => {
    const { get } = setup({ token: "s3cret" });
    expect((await get("/metrics")).status).toBe(401);
    expect((await get("/metrics", { authorization: "Bearer wrong!" })).status).toBe(401);
    const ok = await get("/metrics", { authorization: "Bearer s3cret" });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("# TYPE cellar_http_requests_total counter");
  });

  test("only GET reaches the ops routes; other methods go to the app", async () => {
    const { fetch } = setup();
    expect((await fetch(new Request("http://app.test/ready", { method: "POST" }))).status).toBe(201);
  });
});
