import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, createServer, type Server, type Socket } from "node:net";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createDatabase } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { createPlatformApp } from "../apps/platform/src/app";
import { PLATFORM_MAX_BODY_BYTES } from "../apps/platform/src/http/body";
import { createPlatformLimiter, PLATFORM_LIMITS } from "../apps/platform/src/http/limits";
import { createTestStack, platformOnStack, waitFor, type TestStack } from "./helpers/stack";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "hostile", plan: "pro", webhooks: true });
});
afterAll(() => stack.stop());

const BODY_ROUTES = ["/telemetry/otel/sessions/filtered", "/webhooks"];

/** A request body that counts how many bytes the server pulled from it. */
function countingBody(totalBytes: number) {
  const chunk = new Uint8Array(64 * 1024).fill(0x7b); // "{{{{": never valid JSON
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => sent };
}

describe("platform: authenticate first, parse second", () => {
  for (const path of BODY_ROUTES) {
    test(`unauthenticated malformed JSON to POST ${path} is the bare 401`, async () => {
      for (const headers of [{}, { authorization: "Token cel_pk_unknown" }] as Record<string, string>[]) {
        const res = await stack.platformRequest(path, { method: "POST", headers, body: "{not json" });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: "unauthorized" });
      }
    });

    test(`an unauthenticated 10 MB body to POST ${path} is not read before the 401`, async () => {
      const body = countingBody(10 * 1024 * 1024);
      const res = await stack.platformRequest(path, {
        method: "POST",
        body: body.stream,
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "unauthorized" });
      // The stream may be primed with a chunk or two; it is never read to the end.
      expect(body.pulled()).toBeLessThan(PLATFORM_MAX_BODY_BYTES * 4);
    });
  }

  test("an authenticated body over 64 KiB is 413 and read no further than the cap", async () => {
    const body = countingBody(10 * 1024 * 1024);
    const res = await stack.platformRequest("/telemetry/otel/sessions/filtered", {
      method: "POST",
      token: tenant.platformKey,
      body: body.stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: `request body exceeds ${PLATFORM_MAX_BODY_BYTES} bytes` });
    expect(body.pulled()).toBeLessThan(PLATFORM_MAX_BODY_BYTES * 4);
  });

  test("a declared Content-Length over the cap is 413 at once", async () => {
    const res = await stack.platformRequest("/webhooks", {
      method: "POST",
      token: tenant.platformKey,
      body: "x".repeat(PLATFORM_MAX_BODY_BYTES + 1),
    });
    expect(res.status).toBe(413);
  });

  test("authenticated malformed JSON is still the 400 naming the body", async () => {
    const res = await stack.platformRequest("/webhooks", {
      method: "POST",
      token: tenant.platformKey,
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toContain("JSON");
  });
});

describe("platform: per-key and per-tenant limits (docs/platform-api.md)", () => {
  test("past its burst, a platform key gets 429 with Retry-After and the RateLimit headers", async () => {
    const { platformKey } = await bootstrapTenant(stack.database.db, {
      name: "chatty",
      plan: "free",
      email: "o@chatty.test",
    });
    // The documented limits on a stopped clock: no refill while the loop runs, however slow the
    // machine, so exactly the burst passes.
    const app = platformOnStack(stack, { limiter: createPlatformLimiter(PLATFORM_LIMITS, () => 1_000_000) });
    const request = (token: string) =>
      app.handle(new Request("http://platform.test/api/v1/webhooks", { headers: { authorization: `Token ${token}` } }));
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 260 && !refused; i++) {
      const res = await request(platformKey);
      statuses.push(res.status);
      if (res.status === 429) refused = res;
    }
    expect(refused).toBeDefined();
    expect(statuses.filter((s) => s === 200).length).toBe(PLATFORM_LIMITS.perKey.burst);
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused!.headers.get("ratelimit-limit")).toBe("200");
    expect((await refused!.json()).error).toContain("rate limit exceeded for this platform key");
    // Another key of another tenant is not affected.
    expect((await request(tenant.platformKey)).status).toBe(200);
  });

  test("webhook test sends and manual retries are throttled per tenant", async () => {
    const id = crypto.randomUUID();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const path = i % 2 ? `/webhooks/${id}/test` : `/webhooks/${id}/deliveries/${crypto.randomUUID()}/retry`;
      statuses.push((await stack.platformRequest(path, { method: "POST", token: tenant.platformKey })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(404));
    expect(statuses.slice(10)).toEqual([429, 429]);
  });
});

describe("platform: Postgres trouble is 503 with Retry-After, quickly", () => {
  const logger = createLogger("silent");
  const appOn = (url: string) => {
    const database = createDatabase(url, { max: 2, connectTimeoutSeconds: 2 });
    const app = createPlatformApp({
      db: database.db,
      sql: database.sql,
      keys: new KeyResolver(database.db),
      logger,
      windowSeconds: 1,
    });
    return { app, database };
  };
  const get = (app: ReturnType<typeof createPlatformApp>) =>
    app.handle(
      new Request("http://platform.test/api/v1/telemetry/otel/sessions/support-bot/s-1/traces", {
        headers: { authorization: "Token cel_pk_whatever" },
      }),
    );

  test("connection refused: 503 + Retry-After", async () => {
    const { app, database } = appOn("postgres://cellar:cellar@127.0.0.1:1/cellar");
    const res = await get(app);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await res.json()).toEqual({ error: "database unavailable, retry later" });
    await database.close();
  });

  test("a server that accepts and never answers: 503 within 5 s", async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as { port: number }).port;
    const { app, database } = appOn(`postgres://cellar:cellar@127.0.0.1:${port}/cellar`);
    const t0 = performance.now();
    const res = await get(app);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(performance.now() - t0).toBeLessThan(5_000);
    await database.close().catch(() => {});
    silent.close();
  });

  test("a read that outlives the statement timeout is 503 + Retry-After", async () => {
    const database = createDatabase(process.env.DATABASE_URL_FOR_TEST ?? stackUrl(), {
      max: 2,
      statementTimeoutMs: 300,
    });
    const app = createPlatformApp({
      db: database.db,
      sql: database.sql,
      keys: new KeyResolver(database.db),
      logger,
      windowSeconds: 1,
    });
    // Hold a lock the read needs, so the read waits past its timeout.
    const locker = stack.database.sql.reserve();
    const conn = await locker;
    await conn`begin`;
    await conn`lock table trace_services in access exclusive mode`;
    try {
      const res = await app.handle(
        new Request("http://platform.test/api/v1/telemetry/otel/sessions/support-bot/s-1/traces", {
          headers: { authorization: `Token ${tenant.platformKey}` },
        }),
      );
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBeTruthy();
      expect(await res.json()).toEqual({ error: "the query took too long; retry later or narrow the request" });
    } finally {
      await conn`rollback`;
      conn.release();
      await database.close();
    }
  });

  test("a Postgres that stops answering mid-connection (SIGSTOP, partition): 503 within the request deadline, then recovers", async () => {
    // A proxy in front of the test's Postgres that can freeze: bytes are held, not forwarded,
    // as with a stopped server process. The statement timeout cannot help (the server enforces it).
    const opts = (stack.database.sql as unknown as { options: { host: string[]; port: number[] } }).options;
    let frozen = false;
    const held: Array<() => void> = [];
    const proxy: Server = createServer((client) => {
      const upstream = connect(opts.port[0], opts.host[0]);
      const pipe = (from: Socket, to: Socket) =>
        from.on("data", (chunk) => (frozen ? held.push(() => to.write(chunk)) : to.write(chunk)));
      pipe(client, upstream);
      pipe(upstream, client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const url = stackUrl().replace(
      `${opts.host[0]}:${opts.port[0]}`,
      `127.0.0.1:${(proxy.address() as { port: number }).port}`,
    );
    const database = createDatabase(url, { max: 2 });
    const app = createPlatformApp({
      db: database.db,
      sql: database.sql,
      keys: new KeyResolver(database.db),
      logger,
      windowSeconds: 1,
      requestDeadlineMs: 1_000,
    });
    const read = () =>
      app.handle(
        new Request("http://platform.test/api/v1/webhooks", {
          headers: { authorization: `Token ${tenant.platformKey}` },
        }),
      );
    try {
      expect((await read()).status).toBe(200);
      frozen = true;
      const t0 = performance.now();
      const res = await read();
      const took = performance.now() - t0;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toEqual({ error: "the database did not answer in time; retry later" });
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(5_000);
      // Postgres answers again: the held bytes flow, and so do new reads.
      frozen = false;
      for (const release of held.splice(0)) release();
      await waitFor(async () => (await read()).status === 200, { what: "reads to recover", timeoutMs: 10_000 });
    } finally {
      frozen = false;
      for (const release of held.splice(0)) release();
      await database.close().catch(() => {});
      proxy.close();
    }
  });
});

function stackUrl(): string {
  const opts = (
    stack.database.sql as unknown as {
      options: { host: string[]; port: number[]; user: string; pass: string; database: string };
    }
  ).options;
  return `postgres://${opts.user}:${encodeURIComponent(opts.pass ?? "")}@${opts.host[0]}:${opts.port[0]}/${opts.database}`;
}
