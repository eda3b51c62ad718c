import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createInvitation, setPassword } from "@cellar/shared/admin/signin";
import { createLogger } from "@cellar/shared/logger";
import { createPlatformApp } from "../apps/platform/src/app";
import { SignInService } from "../apps/platform/src/signin/service";
import { readEndpoints, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { runAdmin } from "./helpers/admin-cli";
import { createTestStack, type TestStack } from "./helpers/stack";

// Sign-in over HTTP, in-process, with a movable clock: what the browser tests click through,
// checked answer by answer (docs/dashboard.md).
let stack: TestStack;
let f: PlatformFixture;
let clock = Date.now();
let app: ReturnType<typeof createPlatformApp>;
let keys: KeyResolver;
const PASSWORD = "correct horse battery staple";

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
  const db = stack.database.db;
  keys = new KeyResolver(db, { ttlMs: 200 });
  app = createPlatformApp({
    db,
    sql: stack.database.sql,
    keys,
    logger: createLogger("silent"),
    windowSeconds: 1,
    signIns: new SignInService(db, stack.database.sql, { now: () => clock, sessionTtlMs: 3600_000 }),
    webhooks: { secretBox: stack.secretBox },
  });
  for (const id of [f.a.ownerId, await userId("viewer@acme.test")])
    await setPassword(db, { userId: id, password: PASSWORD });
});
afterAll(() => stack.stop());

async function userId(email: string): Promise<string> {
  const [u] = await stack.database.sql<
    { id: string }[]
  >`select id from users where email = ${email} and tenant_id = ${f.a.tenantId}`;
  return u.id;
}

function req(path: string, init: { method?: string; body?: unknown; auth?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.auth) headers.authorization = init.auth;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  return app.handle(
    new Request(`http://platform.test${path}`, {
      method: init.method ?? (init.body !== undefined ? "POST" : "GET"),
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    }),
  );
}

async function signIn(email: string, password = PASSWORD): Promise<string> {
  const r = await req("/auth/sign-in", { body: { email, password } });
  expect(r.status).toBe(200);
  const body = await r.json();
  expect(body.token).toStartWith("cel_ds_");
  return body.token;
}

const filtered = (auth: string) =>
  req("/api/v1/telemetry/otel/sessions/filtered", { body: { serviceName: "support-bot" }, auth });

describe("sign-in", () => {
  test("the right password opens a session whose Bearer token reads the API", async () => {
    const token = await signIn("owner@example.com");
    const r = await filtered(`Bearer ${token}`);
    expect(r.status).toBe(200);
    expect((await r.json()).sessions.map((s: any) => s.sessionId).sort()).toEqual(["conv-1", "conv-2"]);
    const me = await (await req("/auth/me", { auth: `bearer ${token}` })).json();
    expect(me.user).toMatchObject({ email: "owner@example.com", role: "owner" });
    expect(me.services.map((s: any) => s.name)).toEqual(["billing-bot", "support-bot"]);
  });

  test("a wrong password and an unknown email get the same 401", async () => {
    for (const email of ["owner@example.com", "nobody@example.com"]) {
      const r = await req("/auth/sign-in", { body: { email, password: "not the password" } });
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: "wrong email or password" });
    }
    // The failure above counted once; a success resets the count.
    await signIn("owner@example.com");
  });

  test("a bad body is a 400 naming the field; a large one is 413 unread", async () => {
    const r = await req("/auth/sign-in", { body: { email: "owner@example.com" } });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toContain("password");
    const long = await req("/auth/sign-in", { body: { email: "owner@example.com", password: 42 } });
    expect(long.status).toBe(400);
    expect((await long.json()).error).toContain("password");
    const big = await req("/auth/sign-in", { body: { email: "owner@example.com", password: "x".repeat(1_000_000) } });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ error: "request body exceeds 4096 bytes" });
    const notJson = await app.handle(
      new Request("http://platform.test/auth/sign-in", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{nope",
      }),
    );
    expect(notJson.status).toBe(400);
  });

  test("five failures in a row lock the account; the lock answers 429 even to the right password, then expires", async () => {
    const email = "viewer@acme.test";
    for (let i = 1; i <= 4; i++)
      expect((await req("/auth/sign-in", { body: { email, password: `guess ${i}` } })).status).toBe(401);
    expect((await req("/auth/sign-in", { body: { email, password: "guess 5" } })).status).toBe(401);
    const locked = await req("/auth/sign-in", { body: { email, password: PASSWORD } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThanOrEqual(29);
    expect((await locked.json()).error).toMatch(/too many failed sign-ins; try again in \d+ s/);
    clock += 31_000;
    await signIn(email);
    // And the count started over: one wrong password is a plain 401 again.
    expect((await req("/auth/sign-in", { body: { email, password: "again wrong" } })).status).toBe(401);
    await signIn(email);
  });

  test("an expired token is the bare 401 on the API and on /auth", async () => {
    const token = await signIn("owner@example.com");
    clock += 3600_000 + 1;
    for (const r of [await filtered(`Bearer ${token}`), await req("/auth/me", { auth: `Bearer ${token}` })]) {
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: "unauthorized" });
    }
  });

  test("a platform key sent as Bearer is still 401 (contract: Authentication rule 2), and cannot use /auth", async () => {
    const r = await filtered(`Bearer ${f.keys.owner}`);
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ error: "unauthorized" });
    expect((await filtered(`Token ${f.keys.owner}`)).status).toBe(200);
    expect((await req("/auth/me", { auth: `Token ${f.keys.owner}` })).status).toBe(401);
    expect((await req("/auth/me", { auth: `Bearer ${f.keys.owner}` })).status).toBe(401);
    // A sign-in token is not a platform key either.
    const token = await signIn("owner@example.com");
    expect((await filtered(`Token ${token}`)).status).toBe(401);
  });

  test("sign-out ends the token at once", async () => {
    const token = await signIn("owner@example.com");
    expect((await req("/auth/sign-out", { method: "POST", auth: `Bearer ${token}` })).status).toBe(204);
    expect((await filtered(`Bearer ${token}`)).status).toBe(401);
  });

  test("a password reset ends every open sign-in of the user", async () => {
    const token = await signIn("owner@example.com");
    await setPassword(stack.database.db, { userId: f.a.ownerId, password: PASSWORD });
    expect((await filtered(`Bearer ${token}`)).status).toBe(401);
  });

  test("a deprovisioned user's token stops working", async () => {
    const u = await createUser(stack.database.db, { tenantId: f.a.tenantId, email: "leaver@acme.test", role: "admin" });
    await setPassword(stack.database.db, { userId: u.id, password: PASSWORD });
    const token = await signIn("leaver@acme.test");
    await stack.database.sql`update users set deprovisioned_at = now() where id = ${u.id}`;
    expect((await filtered(`Bearer ${token}`)).status).toBe(401);
    expect((await req("/auth/sign-in", { body: { email: "leaver@acme.test", password: PASSWORD } })).status).toBe(401);
  });
});

test("every read endpoint answers a sign-in token exactly as the same user's platform key", async () => {
  // Guards route modules that mount platformAuth without the sign-in resolver.
  const token = await signIn("owner@example.com");
  for (const e of readEndpoints(f)) {
    const asKey = await req(`/api/v1${e.path}`, { method: e.method, body: e.body, auth: `Token ${f.keys.owner}` });
    const asToken = await req(`/api/v1${e.path}`, { method: e.method, body: e.body, auth: `Bearer ${token}` });
    expect(`${e.method} ${e.path} ${asToken.status}`).toBe(`${e.method} ${e.path} ${asKey.status}`);
    expect(asToken.status).not.toBe(401);
  }
  const del = await req("/api/v1/telemetry/otel/sessions/support-bot/no-such-session", {
    method: "DELETE",
    auth: `Bearer ${token}`,
  });
  expect(del.status).not.toBe(401);
});

test("unknown Bearer tokens from one address are limited (429); a token seen valid is not", async () => {
  const svc = new SignInService(stack.database.db, stack.database.sql, { missesPerSecond: 0.001, missBurst: 2 });
  const { token } = await svc.signIn("owner@example.com", PASSWORD);
  expect(await svc.resolve("cel_ds_unknown-1", "10.0.0.9")).toBeNull();
  expect(await svc.resolve("cel_ds_unknown-2", "10.0.0.9")).toBeNull();
  const limited = await svc.resolve("cel_ds_unknown-3", "10.0.0.9").catch((e) => e);
  expect(limited.status).toBe(429);
  expect(limited.headers["retry-after"]).toBeDefined();
  expect((await svc.resolve(token, "10.0.0.9"))?.userId).toBe(f.a.ownerId);
  expect(await svc.resolve("cel_ds_unknown-4", "10.0.0.10")).toBeNull(); // another address has its own bucket
});

test("failed sign-ins from one address, over every account, are limited (429, no password check); other addresses and successes are not", async () => {
  let now = Date.now();
  const svc = new SignInService(stack.database.db, stack.database.sql, {
    now: () => now,
    failureBurst: 3,
    failuresPerSecond: 1 / 6,
  });
  const from = (address: string, email: string, password: string) =>
    svc.signIn(email, password, address).then(
      () => 200,
      (e) => e,
    );
  // Successes take nothing from the bucket.
  for (let i = 0; i < 5; i++) expect(await from("198.51.100.7", "owner@example.com", PASSWORD)).toBe(200);
  // Three failures spread over accounts, and an unknown email: each one counts, each is a 401.
  expect((await from("198.51.100.7", "viewer@acme.test", "guess 1")).status).toBe(401);
  expect((await from("198.51.100.7", "nobody@nowhere.test", "guess 2")).status).toBe(401);
  expect((await from("198.51.100.7", "owner@example.com", "guess 3")).status).toBe(401);
  // Now even the right password from that address is refused before any check.
  const limited = await from("198.51.100.7", "owner@example.com", PASSWORD);
  expect(limited.status).toBe(429);
  expect(limited.message).toBe("rate limit exceeded for failed sign-ins from this address: 10 per minute, burst 3");
  expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  // Another address is unaffected, and so is the account (no lockout from three failures).
  expect(await from("198.51.100.8", "owner@example.com", PASSWORD)).toBe(200);
  // One failure's worth comes back every 6 s.
  now += 6_000;
  expect(await from("198.51.100.7", "owner@example.com", PASSWORD)).toBe(200);
  expect((await from("198.51.100.7", "owner@example.com", "guess 4")).status).toBe(401);
  expect((await from("198.51.100.7", "owner@example.com", PASSWORD)).status).toBe(429);
});

describe("roles apply exactly as for platform keys", () => {
  test("a viewer signed in cannot manage webhooks (403) and sees only its projects", async () => {
    const token = await signIn("viewer@acme.test");
    const create = await req("/api/v1/webhooks", {
      body: {
        trace_service_id: crypto.randomUUID(),
        name: "x",
        url: "https://example.com/h",
        event_types: ["session.matured"],
      },
      auth: `Bearer ${token}`,
    });
    expect(create.status).toBe(403);
    expect(await create.json()).toEqual({ error: "managing webhook subscriptions needs role admin or higher" });
    const other = await req("/api/v1/telemetry/otel/sessions/filtered", {
      body: { serviceName: "billing-bot" },
      auth: `Bearer ${token}`,
    });
    expect(other.status).toBe(403);
    const me = await (await req("/auth/me", { auth: `Bearer ${token}` })).json();
    expect(me.services.map((s: any) => s.name)).toEqual(["support-bot"]);
  });
});

describe("platform keys from the settings page", () => {
  test("create (shown once), use with Token, list by prefix, revoke", async () => {
    const token = await signIn("owner@example.com");
    const created = await req("/auth/platform-keys", { method: "POST", auth: `Bearer ${token}` });
    expect(created.status).toBe(201);
    const { id, key, prefix } = await created.json();
    expect(key).toStartWith("cel_pk_");
    expect((await filtered(`Token ${key}`)).status).toBe(200);
    const list = await (await req("/auth/platform-keys", { auth: `Bearer ${token}` })).json();
    const listed = list.keys.find((k: any) => k.id === id);
    expect(listed).toEqual({ id, prefix, createdAt: expect.any(String) });
    expect(JSON.stringify(list)).not.toContain(key);
    expect((await req(`/auth/platform-keys/${id}`, { method: "DELETE", auth: `Bearer ${token}` })).status).toBe(204);
    expect((await req(`/auth/platform-keys/${id}`, { method: "DELETE", auth: `Bearer ${token}` })).status).toBe(404);
    await Bun.sleep(keys.ttlMs + 50);
    expect((await filtered(`Token ${key}`)).status).toBe(401);
  });

  test("another user's key cannot be revoked (404)", async () => {
    const token = await signIn("viewer@acme.test");
    const other = await createApiKey(stack.database.db, { kind: "platform", userId: f.a.ownerId });
    expect((await req(`/auth/platform-keys/${other.id}`, { method: "DELETE", auth: `Bearer ${token}` })).status).toBe(
      404,
    );
  });
});

describe("invitations", () => {
  test("an invitation sets the password once and signs the user in", async () => {
    const inv = await createInvitation(stack.database.db, {
      tenantId: f.a.tenantId,
      email: "new@acme.test",
      role: "member",
    });
    const short = await req("/auth/invitations/accept", { body: { token: inv.token, password: "short" } });
    expect(short.status).toBe(400);
    expect((await short.json()).error).toBe("invalid password: password must be at least 12 characters");
    const ok = await req("/auth/invitations/accept", { body: { token: inv.token, password: PASSWORD } });
    expect(ok.status).toBe(200);
    expect((await ok.json()).token).toStartWith("cel_ds_");
    const again = await req("/auth/invitations/accept", { body: { token: inv.token, password: PASSWORD } });
    expect(again.status).toBe(400);
    await signIn("new@acme.test");
  });
});

describe("admin CLI", () => {
  const admin = (args: string[], input?: string) => runAdmin(args, { databaseUrl: databaseUrl(), input });
  function databaseUrl() {
    const o = stack.database.sql.options as any;
    return `postgres://${o.user}:${encodeURIComponent(o.pass ?? "")}@${o.host[0]}:${o.port[0]}/${o.database}`;
  }

  test("user invite prints a one-time link; user password sets a password read from stdin", async () => {
    const inv = admin(["user", "invite", "--tenant", f.a.tenantId, "--email", "cli@acme.test", "--role", "viewer"]);
    expect(inv.stderr).toBe("");
    expect(inv.code).toBe(0);
    expect(inv.json.path).toBe(`/invite#${inv.json.token}`);
    const pw = admin(["user", "password", "--id", inv.json.userId], "a long enough password\n");
    expect(pw.code).toBe(0);
    expect(pw.json).toEqual({ id: inv.json.userId });
    await signIn("cli@acme.test", "a long enough password");
    const weak = admin(["user", "password", "--id", inv.json.userId], "short\n");
    expect(weak.code).not.toBe(0);
    expect(weak.stderr).toContain("at least 12 characters");
  });
});

describe("the dashboard is served at / and leaves /api/v1 alone", () => {
  test("pages answer the app's HTML with a strict CSP; assets are hashed; the API's 404 is unchanged", async () => {
    for (const path of ["/", "/sessions", "/sessions/support-bot/conv-1", "/webhooks", "/settings", "/invite"]) {
      const r = await req(path);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toContain("text/html");
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
      const html = await r.text();
      const js = html.match(/src="(\/assets\/app\.[a-z0-9]+\.js)"/)![1];
      const asset = await req(js);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("cache-control")).toContain("immutable");
    }
    const missing = await req("/api/v1/nope", { auth: `Token ${f.keys.owner}` });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "not found" });
    expect((await req("/assets/app.nothing.js")).status).toBe(404);
  });
});

test("sessions/filtered filters by model (names in cost by model)", async () => {
  const r = await filtered(`Token ${f.keys.owner}`);
  expect(r.status).toBe(200);
  const byModel = async (value: string) => {
    const res = await req("/api/v1/telemetry/otel/sessions/filtered", {
      body: { serviceName: "support-bot", filters: [{ field: "model", operator: "equals", value }] },
      auth: `Token ${f.keys.owner}`,
    });
    expect(res.status).toBe(200);
    return (await res.json()).sessions.map((s: any) => s.sessionId).sort();
  };
  expect(await byModel("gpt-4o-mini")).toEqual(["conv-1", "conv-2"]);
  expect(await byModel("claude-3")).toEqual([]);
});
