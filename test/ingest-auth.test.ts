import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { revokeApiKey } from "@cellar/shared/admin/tenancy";
import { hashKey, KeyResolver } from "@cellar/shared/auth/keys";
import { apiKeys } from "@cellar/shared/db/schema";
import { createIngestFixture, type IngestFixture } from "../apps/ingest/test/fixture";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

let fx: IngestFixture;
beforeAll(async () => {
  fx = await createIngestFixture();
});
afterAll(() => fx.stop());

const trace = (extra: Record<string, unknown> = {}) => ({
  ...chatTrace({
    sessionId: `s-${crypto.randomUUID().slice(0, 8)}`,
    messages: [{ role: "user", content: "hi" }],
    reply: "hello",
  }),
  ...extra,
});
const withoutService = () => {
  const t: any = trace();
  delete t.service_name;
  return t;
};
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("credentials", () => {
  test("a telemetry key is accepted and the message carries the tenant", async () => {
    const res = await fx.post("/raw/traces", trace());
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "success" });
    expect((await fx.last()).tenantId).toBe(fx.tenant.tenantId);
  });

  test("a legacy key (minted under an older format) keeps working", async () => {
    const legacy = "tk-legacy-0123456789abcdef";
    await fx.stack.database.db.insert(apiKeys).values({
      tenantId: fx.tenant.tenantId,
      kind: "telemetry",
      keyHash: hashKey(legacy),
      displayPrefix: "tk-legacy",
    });
    expect((await fx.post("/raw/traces", trace(), bearer(legacy))).status).toBe(200);
  });

  test("the Bearer scheme is case-insensitive", async () => {
    expect((await fx.post("/raw/traces", trace(), { authorization: `bearer ${fx.tenant.telemetryKey}` })).status).toBe(
      200,
    );
  });

  test("a server DSN supplies the service when the payload omits it", async () => {
    const dsn = await fx.key("dsn-server", { serviceName: "billing" });
    expect(dsn.key.startsWith("svc-ing-s-")).toBe(true);
    expect((await fx.post("/raw/traces", withoutService(), bearer(dsn.key))).status).toBe(200);
    expect((await fx.last()).serviceName).toBe("billing");
    expect(
      (await fx.post("/raw/events", { name: "e", session_id: "s", timestamp: "2025-01-01T00:00:00Z" }, bearer(dsn.key)))
        .status,
    ).toBe(200);
    expect((await fx.last()).serviceName).toBe("billing");
    expect((await fx.post("/raw/traces", trace({ service_name: "billing" }), bearer(dsn.key))).status).toBe(200);
  });

  test("a server DSN refuses a payload naming another service with 403 and stores nothing", async () => {
    const dsn = await fx.key("dsn-server", { serviceName: "billing" });
    const before = await fx.stored();
    const res = await fx.post("/raw/traces", trace({ service_name: "support-bot" }), bearer(dsn.key));
    expect(res.status).toBe(403);
    expect((await res.json()).error).toContain("service_name");
    expect(await fx.stored()).toBe(before);
  });

  test("the same body from two DSNs of different services is stored twice", async () => {
    const a = await fx.key("dsn-server", { serviceName: "svc-a" });
    const b = await fx.key("dsn-server", { serviceName: "svc-b" });
    const body = withoutService();
    const before = await fx.stored();
    expect((await fx.post("/raw/traces", body, bearer(a.key))).status).toBe(200);
    expect((await fx.post("/raw/traces", body, bearer(b.key))).status).toBe(200);
    expect(await fx.stored()).toBe(before + 2);
  });
});

describe("identical bare 401", () => {
  const cases: Array<[string, () => Promise<Record<string, string | undefined>>]> = [
    ["missing header", async () => ({ authorization: undefined })],
    ["empty bearer", async () => ({ authorization: "Bearer " })],
    ["wrong scheme", async () => ({ authorization: `Token ${fx.tenant.telemetryKey}` })],
    ["basic auth", async () => ({ authorization: `Basic ${btoa("a:b")}` })],
    ["two tokens", async () => ({ authorization: `Bearer ${fx.tenant.telemetryKey} extra` })],
    ["unknown key", async () => bearer("cel_tk_doesnotexist")],
    ["oversized key", async () => bearer("k".repeat(5000))],
    ["platform key", async () => bearer(fx.tenant.platformKey)],
    [
      "revoked key",
      async () => {
        const k = await fx.key("telemetry");
        await revokeApiKey(fx.stack.database.db, { id: k.id });
        return bearer(k.key);
      },
    ],
  ];
  const shapes: string[] = [];
  for (const [name, headers] of cases) {
    test(name, async () => {
      const before = await fx.stored();
      const res = await fx.post("/raw/traces", trace(), await headers());
      expect(res.status).toBe(401);
      const hs = [...res.headers].filter(([k]) => k !== "x-request-id" && k !== "date").sort();
      shapes.push(JSON.stringify({ body: await res.text(), headers: hs }));
      expect(await fx.stored()).toBe(before);
    });
  }
  test("all 401s are byte-identical apart from the request id", () => {
    expect(shapes.length).toBe(cases.length);
    expect(new Set(shapes).size).toBe(1);
    expect(JSON.parse(JSON.parse(shapes[0]).body)).toEqual({ error: "unauthorized" });
  });
  test("401 comes before body checks (no hint from validation)", async () => {
    const res = await fx.post("/raw/traces", "not json", { authorization: undefined, "content-type": "text/plain" });
    expect(res.status).toBe(401);
  });
});

test("a revoked key stops working on every instance within the cache TTL", async () => {
  const k = await fx.key("telemetry");
  const instances = [
    fx.build({ keys: new KeyResolver(fx.stack.database.db) }),
    fx.build({ keys: new KeyResolver(fx.stack.database.db) }),
  ];
  for (const app of instances) expect((await fx.post("/raw/traces", trace(), bearer(k.key), app)).status).toBe(200);
  await revokeApiKey(fx.stack.database.db, { id: k.id });
  const revokedAt = Date.now();
  await waitFor(
    async () => {
      const statuses = await Promise.all(
        instances.map(
          async (app) =>
            (
              await fx.post(
                "/raw/events",
                { name: "e", service_name: "x", session_id: "s", timestamp: "2025-01-01T00:00:00Z" },
                bearer(k.key),
                app,
              )
            ).status,
        ),
      );
      return statuses.every((s) => s === 401);
    },
    { timeoutMs: 10_000, intervalMs: 100, what: "revoked key refused everywhere" },
  );
  // The documented bound is the KeyResolver TTL (2 s); allow scheduling slack on a busy machine.
  expect(Date.now() - revokedAt).toBeLessThan(2_000 + 3_000);
});

test("a key lookup that fails (database down) is 503 with Retry-After, not 401 or 500", async () => {
  const broken = {
    resolve: async () => {
      throw new Error("connection refused");
    },
  } as unknown as KeyResolver;
  const res = await fx.post("/raw/traces", trace(), {}, fx.build({ keys: broken }));
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("2");
});

describe("browser origins and CORS", () => {
  const origin = "https://app.example.com";

  test("a client DSN with allowed_origins accepts a listed origin and answers with CORS headers", async () => {
    const dsn = await fx.key("dsn-client", { serviceName: "web", origins: [origin, "https://other.example.com"] });
    expect(dsn.key.startsWith("svc-ing-c-")).toBe(true);
    const res = await fx.post("/raw/traces", withoutService(), { ...bearer(dsn.key), origin });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    expect(res.headers.get("vary")).toContain("Origin");
    expect(res.headers.get("access-control-expose-headers")).toContain("retry-after");
    expect((await fx.last()).serviceName).toBe("web");
  });

  test("errors for a permitted origin still carry CORS headers so the page can read them", async () => {
    const dsn = await fx.key("dsn-client", { serviceName: "web", origins: [origin] });
    const res = await fx.post("/raw/traces", { provider: "openai" }, { ...bearer(dsn.key), origin });
    expect(res.status).toBe(400);
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  });

  test("a client DSN refuses an unlisted origin and a missing Origin with 403, storing nothing", async () => {
    const dsn = await fx.key("dsn-client", { serviceName: "web", origins: [origin] });
    const before = await fx.stored();
    const evil = await fx.post("/raw/traces", withoutService(), {
      ...bearer(dsn.key),
      origin: "https://evil.example.net",
    });
    expect(evil.status).toBe(403);
    expect((await evil.json()).error).toContain("origin");
    // Readable by the page (docs/ingestion.md): the browser SDK reports it rather than retrying.
    expect(evil.headers.get("access-control-allow-origin")).toBe("https://evil.example.net");
    const none = await fx.post("/raw/traces", withoutService(), bearer(dsn.key));
    expect(none.status).toBe(403);
    expect(await fx.stored()).toBe(before);
  });

  test("a client DSN without allowed_origins accepts any origin, and no origin", async () => {
    const dsn = await fx.key("dsn-client", { serviceName: "web" });
    const res = await fx.post("/raw/traces", withoutService(), {
      ...bearer(dsn.key),
      origin: "https://anywhere.example.org",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://anywhere.example.org");
    expect((await fx.post("/raw/traces", withoutService(), bearer(dsn.key))).status).toBe(200);
  });

  test("a client DSN naming another service is 403", async () => {
    const dsn = await fx.key("dsn-client", { serviceName: "web" });
    expect((await fx.post("/raw/traces", trace({ service_name: "api" }), { ...bearer(dsn.key), origin })).status).toBe(
      403,
    );
  });

  test("telemetry keys and server DSNs are refused from browsers (403) and work without Origin", async () => {
    const server = await fx.key("dsn-server", { serviceName: "billing" });
    const before = await fx.stored();
    for (const headers of [
      { ...fx.auth, origin },
      { ...bearer(server.key), origin },
    ]) {
      const res = await fx.post("/raw/traces", withoutService(), headers);
      expect(res.status).toBe(403);
      expect((await res.json()).error).toContain("client DSN");
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    }
    expect(await fx.stored()).toBe(before);
    expect((await fx.post("/raw/traces", withoutService(), bearer(server.key))).status).toBe(200);
  });

  test("a preflight is answered 204 with the CORS grant for the asking origin", async () => {
    for (const path of ["/raw/traces", "/raw/events"]) {
      const res = await fx.app.handle(
        new Request(`http://ingest.test${path}`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type",
          },
        }),
      );
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
      expect(res.headers.get("access-control-allow-headers")).toContain("authorization");
      expect(res.headers.get("access-control-allow-headers")).toContain("content-type");
      expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  test("a preflight on an unknown path is 404", async () => {
    const res = await fx.app.handle(
      new Request("http://ingest.test/raw/nope", {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST" },
      }),
    );
    expect(res.status).toBe(404);
  });
});
