import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant, createService, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { stubDns } from "./helpers/dns";
import { createTestStack, type TestStack } from "./helpers/stack";
import { webhookApi } from "./helpers/webhooks";

const DNS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34"],
  "other.example.com": ["93.184.216.35"],
  "internal.example.com": ["10.0.0.7"],
  "sneaky.example.com": ["93.184.216.34", "169.254.169.254"],
};
const resolveDns = stubDns(DNS, null);

let stack: TestStack;
let req: ReturnType<typeof webhookApi>;
let acme: Awaited<ReturnType<typeof bootstrapTenant>>;
let noEntitlement: Awaited<ReturnType<typeof bootstrapTenant>>;
let acmeService: string;
let acmeService2: string;
let plainService: string;
const keys: Record<"admin" | "member" | "viewer", string> = { admin: "", member: "", viewer: "" };

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  req = webhookApi(stack, { resolveDns });
  const db = stack.database.db;
  acme = await bootstrapTenant(db, { name: "acme", webhooks: true });
  noEntitlement = await bootstrapTenant(db, { name: "plain", webhooks: false });
  acmeService = (await createService(db, { tenantId: acme.tenantId, name: "support-bot" })).id;
  acmeService2 = (await createService(db, { tenantId: acme.tenantId, name: "batch-jobs" })).id;
  plainService = (await createService(db, { tenantId: noEntitlement.tenantId, name: "svc" })).id;
  for (const role of ["admin", "member", "viewer"] as const) {
    const u = await createUser(db, { tenantId: acme.tenantId, email: `${role}@acme.test`, role });
    keys[role] = (await createApiKey(db, { kind: "platform", userId: u.id })).key;
  }
});
afterAll(() => stack.stop());

const valid = (overrides: Record<string, unknown> = {}) => ({
  trace_service_id: acmeService,
  name: "ops",
  url: "https://hooks.example.com/cellar",
  event_types: ["session.matured"],
  ...overrides,
});
async function create(overrides: Record<string, unknown> = {}, token = acme.platformKey) {
  const res = await req("/webhooks", token, "POST", valid(overrides));
  expect(res.status).toBe(201);
  return res.json();
}
const count = async () => Number((await stack.database.sql`select count(*)::int as n from webhook_subscriptions`)[0].n);

describe("webhook subscriptions API", () => {
  test("create returns the subscription with a whsec_ secret of 32 random bytes, stored encrypted and never shown again", async () => {
    const sub = await create({ event_types: ["session.matured", "trace.matured"] });
    expect(sub).toMatchObject({
      trace_service_id: acmeService,
      name: "ops",
      url: "https://hooks.example.com/cellar",
      event_types: ["session.matured", "trace.matured"],
      enabled: true,
      consecutive_failures: 0,
      last_delivery_status: null,
      disabled_reason: null,
    });
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(atob(sub.secret.slice(6)).length).toBe(32);
    expect(new Date(sub.created_at).toISOString()).toBe(sub.created_at);
    const [row] = await stack.database.sql`select secret_encrypted from webhook_subscriptions where id = ${sub.id}`;
    expect(row.secret_encrypted).not.toContain(sub.secret.slice(6));
    expect(await stack.secretBox.open(row.secret_encrypted, sub.id)).toBe(sub.secret);

    const one = await (await req(`/webhooks/${sub.id}`, acme.platformKey)).json();
    expect(one.secret).toBeUndefined();
    expect(one.id).toBe(sub.id);
    const list = await (await req("/webhooks", acme.platformKey)).json();
    expect(list.data.map((s: any) => s.id)).toContain(sub.id);
    expect(list.data.every((s: any) => s.secret === undefined)).toBe(true);
    await req(`/webhooks/${sub.id}`, acme.platformKey, "DELETE");
  });

  test("bad input is a 400 naming the field and creates nothing", async () => {
    const before = await count();
    const cases: Array<[unknown, RegExp]> = [
      [valid({ event_types: ["session.started"] }), /event_types/],
      [valid({ event_types: [] }), /event_types/],
      [valid({ event_types: "session.matured" }), /event_types/],
      [valid({ url: "http://hooks.example.com/x" }), /url: must use https/],
      [valid({ url: "https://u:p@hooks.example.com/x" }), /url: must not contain credentials/],
      [valid({ url: "https://internal.example.com/x" }), /url: resolves to a non-public address/],
      [valid({ url: "https://sneaky.example.com/x" }), /url: resolves to a non-public address/],
      [valid({ url: "https://127.0.0.1/x" }), /url: resolves to a non-public address/],
      [valid({ url: "https://[::ffff:a00:1]/x" }), /url: resolves to a non-public address/],
      [valid({ url: "https://nowhere.example.com/x" }), /url: host nowhere.example.com does not resolve/],
      [valid({ url: "hooks" }), /url/],
      [valid({ name: "" }), /name/],
      [valid({ name: undefined }), /name/],
      [valid({ trace_service_id: plainService }), /trace_service_id/],
      [valid({ trace_service_id: "nope" }), /trace_service_id/],
      [valid({ colour: "red" }), /colour/],
      ["[1,2]", /body/],
      ["{not json", /JSON/],
    ];
    for (const [body, message] of cases) {
      const res = await req("/webhooks", acme.platformKey, "POST", body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect((await res.json()).error).toMatch(message);
    }
    expect(await count()).toBe(before);
  });

  test("auth: Token only; create, update, delete need admin or higher; viewers can read", async () => {
    const sub = await create();
    expect((await req("/webhooks", undefined)).status).toBe(401);
    expect(
      (await req("/webhooks", undefined, "GET", undefined, { authorization: `Bearer ${acme.platformKey}` })).status,
    ).toBe(401);
    expect((await req("/webhooks", acme.telemetryKey)).status).toBe(401);
    for (const role of ["member", "viewer"] as const) {
      expect((await req("/webhooks", keys[role], "POST", valid())).status).toBe(403);
      expect((await req(`/webhooks/${sub.id}`, keys[role], "PUT", { name: "x" })).status).toBe(403);
      expect((await req(`/webhooks/${sub.id}`, keys[role], "DELETE")).status).toBe(403);
      expect((await req(`/webhooks/${sub.id}/disable`, keys[role], "POST")).status).toBe(403);
      expect((await req(`/webhooks/${sub.id}/rotate-secret`, keys[role], "POST")).status).toBe(403);
    }
    // Members see only services of their projects; the default project is not theirs here.
    expect((await req("/webhooks", keys.member)).status).toBe(200);
    expect((await (await req("/webhooks", keys.member)).json()).data).toEqual([]);
    expect((await req(`/webhooks/${sub.id}`, keys.member)).status).toBe(403);
    const adminCreated = await create({ name: "by admin" }, keys.admin);
    expect(adminCreated.secret).toStartWith("whsec_");
    // Another tenant's subscription does not exist for you.
    expect((await req(`/webhooks/${sub.id}`, noEntitlement.platformKey)).status).toBe(404);
    expect((await req(`/webhooks/${sub.id}`, noEntitlement.platformKey, "DELETE")).status).toBe(404);
    expect((await req("/webhooks/not-a-uuid", acme.platformKey)).status).toBe(404);
    await req(`/webhooks/${sub.id}`, acme.platformKey, "DELETE");
    await req(`/webhooks/${adminCreated.id}`, acme.platformKey, "DELETE");
  });

  test("without the entitlement create, update and enable are 403 while list, delete and disable work", async () => {
    const tok = noEntitlement.platformKey;
    const res = await req("/webhooks", tok, "POST", valid({ trace_service_id: plainService }));
    expect(res.status).toBe(403);
    expect((await res.json()).error).toMatch(/not enabled/);
    // A subscription made while the tenant still had it.
    await stack.database.sql`update tenants set webhooks_enabled = true where id = ${noEntitlement.tenantId}`;
    const sub = await create({ trace_service_id: plainService }, tok);
    await stack.database.sql`update tenants set webhooks_enabled = false where id = ${noEntitlement.tenantId}`;
    expect((await req("/webhooks", tok)).status).toBe(200);
    expect((await req(`/webhooks/${sub.id}`, tok, "PUT", { name: "new" })).status).toBe(403);
    expect((await req(`/webhooks/${sub.id}/disable`, tok, "POST")).status).toBe(200);
    expect((await req(`/webhooks/${sub.id}/enable`, tok, "POST")).status).toBe(403);
    expect((await req(`/webhooks/${sub.id}/deliveries`, tok)).status).toBe(200);
    expect((await req(`/webhooks/${sub.id}`, tok, "DELETE")).status).toBe(204);
    expect((await req(`/webhooks/${sub.id}`, tok)).status).toBe(404);
  });

  test("at most 5 subscriptions per trace service, disabled ones included; only deletion frees a slot", async () => {
    const subs = [];
    for (let i = 0; i < 5; i++) subs.push(await create({ trace_service_id: acmeService2, name: `s${i}` }));
    await req(`/webhooks/${subs[0].id}/disable`, acme.platformKey, "POST");
    const sixth = await req("/webhooks", acme.platformKey, "POST", valid({ trace_service_id: acmeService2 }));
    expect(sixth.status).toBe(409);
    expect((await sixth.json()).error).toMatch(/5 webhook subscriptions/);
    // Other services are not affected.
    const elsewhere = await create();
    await req(`/webhooks/${subs[0].id}`, acme.platformKey, "DELETE");
    const replacement = await create({ trace_service_id: acmeService2 });
    for (const s of [...subs.slice(1), elsewhere, replacement])
      await req(`/webhooks/${s.id}`, acme.platformKey, "DELETE");
  });

  test("PUT changes name, url and event_types, re-validates the url, and rejects empty or bad patches", async () => {
    const sub = await create();
    const res = await req(`/webhooks/${sub.id}`, acme.platformKey, "PUT", {
      name: "renamed",
      url: "https://other.example.com/h",
      event_types: ["trace.matured"],
    });
    expect(res.status).toBe(200);
    const updated = await res.json();
    expect(updated).toMatchObject({
      name: "renamed",
      url: "https://other.example.com/h",
      event_types: ["trace.matured"],
    });
    expect(updated.secret).toBeUndefined();
    expect(Date.parse(updated.updated_at)).toBeGreaterThanOrEqual(Date.parse(sub.updated_at));
    for (const [patch, field] of [
      [{}, "body"],
      [{ url: "https://internal.example.com/x" }, "url"],
      [{ event_types: ["x"] }, "event_types"],
      [{ secret: "whsec_x" }, "secret"],
    ] as const) {
      const bad = await req(`/webhooks/${sub.id}`, acme.platformKey, "PUT", patch);
      expect(bad.status).toBe(400);
      expect((await bad.json()).error).toContain(field);
    }
    expect((await (await req(`/webhooks/${sub.id}`, acme.platformKey)).json()).url).toBe("https://other.example.com/h");
    await req(`/webhooks/${sub.id}`, acme.platformKey, "DELETE");
  });

  test("optional-body routes accept a JSON content type with no body, and still reject broken JSON", async () => {
    const sub = await create();
    const empty = await req(`/webhooks/${sub.id}/rotate-secret`, acme.platformKey, "POST", undefined, {
      "content-type": "application/json",
    });
    expect(empty.status).toBe(200);
    expect((await empty.json()).secret).toMatch(/^whsec_/);
    const broken = await req(`/webhooks/${sub.id}/rotate-secret`, acme.platformKey, "POST", "{not json");
    expect(broken.status).toBe(400);
    expect((await broken.json()).error).toContain("body");
    const notObject = await req(`/webhooks/${sub.id}/rotate-secret`, acme.platformKey, "POST", "[1]");
    expect(notObject.status).toBe(400);
    const testSend = await req(`/webhooks/${sub.id}/test`, acme.platformKey, "POST", undefined, {
      "content-type": "application/json",
    });
    expect(testSend.status).toBe(202);
    await req(`/webhooks/${sub.id}`, acme.platformKey, "DELETE");
  });

  test("rotate-secret returns a new secret once, keeps the old one for the window, and validates the ttl", async () => {
    const sub = await create();
    for (const ttl of [169, -1, 1.5, "24", null]) {
      const bad = await req(`/webhooks/${sub.id}/rotate-secret`, acme.platformKey, "POST", {
        previous_secret_ttl_hours: ttl,
      });
      expect({ ttl, status: bad.status }).toEqual({ ttl, status: 400 });
      expect((await bad.json()).error).toContain("previous_secret_ttl_hours");
    }
    const before = Date.now();
    const rotated = await (await req(`/webhooks/${sub.id}/rotate-secret`, acme.platformKey, "POST")).json();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(sub.secret);
    const window = Date.parse(rotated.previous_secret_expires_at) - before;
    expect(window).toBeGreaterThan(23.9 * 3600_000);
    expect(window).toBeLessThan(24.1 * 3600_000);
    const [row] = await stack.database
      .sql`select secret_encrypted, previous_secret_encrypted from webhook_subscriptions where id = ${sub.id}`;
    expect(await stack.secretBox.open(row.secret_encrypted, sub.id)).toBe(rotated.secret);
    expect(await stack.secretBox.open(row.previous_secret_encrypted, sub.id)).toBe(sub.secret);

    const now = await (
      await req(`/webhooks/${sub.id}/rotate-secret`, acme.platformKey, "POST", { previous_secret_ttl_hours: 0 })
    ).json();
    expect(now.previous_secret_expires_at).toBeNull();
    const [after] = await stack.database
      .sql`select previous_secret_encrypted from webhook_subscriptions where id = ${sub.id}`;
    expect(after.previous_secret_encrypted).toBeNull();
    await req(`/webhooks/${sub.id}`, acme.platformKey, "DELETE");
  });

  test("enable clears platform-set failure state; a user's disable leaves no reason", async () => {
    const sub = await create();
    const off = await (await req(`/webhooks/${sub.id}/disable`, acme.platformKey, "POST")).json();
    expect(off).toMatchObject({ enabled: false, disabled_reason: null });
    await stack.database.sql`update webhook_subscriptions set disabled_reason = 'gone', consecutive_failures = 7,
      failing_since = now() - interval '2 days', last_delivery_status = 'failed' where id = ${sub.id}`;
    expect(await (await req(`/webhooks/${sub.id}`, acme.platformKey)).json()).toMatchObject({
      enabled: false,
      disabled_reason: "gone",
      consecutive_failures: 7,
    });
    const on = await (await req(`/webhooks/${sub.id}/enable`, acme.platformKey, "POST")).json();
    expect(on).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
    const [row] = await stack.database.sql`select failing_since from webhook_subscriptions where id = ${sub.id}`;
    expect(row.failing_since).toBeNull();
    await req(`/webhooks/${sub.id}`, acme.platformKey, "DELETE");
  });

  test("deliveries lists the 10 most recent attempts, newest first; delete removes the history", async () => {
    const sub = await create();
    const sql = stack.database.sql;
    expect((await (await req(`/webhooks/${sub.id}/deliveries`, acme.platformKey)).json()).data).toEqual([]);
    await sql`insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, status, attempts)
      values ('msg_hist', ${acme.tenantId}, ${sub.id}, 'session.matured', 'session:x:1', '{}', now(), 'failed', 9)`;
    for (let i = 1; i <= 12; i++) {
      await sql`insert into webhook_attempts (delivery_id, tenant_id, subscription_id, attempt, status_code, duration_ms, error, attempted_at)
        values ('msg_hist', ${acme.tenantId}, ${sub.id}, ${i}, ${i === 12 ? 200 : 500}, ${10 + i}, ${i === 12 ? null : "HTTP 500"}, now() - make_interval(mins => ${100 - i}))`;
    }
    const { data } = await (await req(`/webhooks/${sub.id}/deliveries`, keys.admin)).json();
    expect(data.map((a: any) => a.attempt)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    expect(data[0]).toMatchObject({
      delivery_id: "msg_hist",
      event_type: "session.matured",
      status_code: 200,
      succeeded: true,
      duration_ms: 22,
      error: null,
    });
    expect(data[1]).toMatchObject({ status_code: 500, succeeded: false, error: "HTTP 500" });
    expect((await req(`/webhooks/${sub.id}`, acme.platformKey, "DELETE")).status).toBe(204);
    expect((await sql`select count(*)::int as n from webhook_attempts where delivery_id = 'msg_hist'`)[0].n).toBe(0);
  });
});

test("the routes are mounted in the platform app under /api/v1/webhooks", async () => {
  const res = await stack.platformRequest("/webhooks", {
    method: "POST",
    token: acme.platformKey,
    body: JSON.stringify({
      trace_service_id: acmeService,
      name: "mounted",
      url: "https://93.184.216.34/hook",
      event_types: ["trace.matured"],
    }),
  });
  expect(res.status).toBe(201);
  const created = await res.json();
  expect(created.secret).toStartWith("whsec_");
  const list = await (await stack.platformRequest("/webhooks", { token: acme.platformKey })).json();
  expect(list.data.map((s: any) => s.id)).toContain(created.id);
  expect(
    (await stack.platformRequest(`/webhooks/${created.id}`, { method: "DELETE", token: acme.platformKey })).status,
  ).toBe(204);

  // ...and documented in the OpenAPI document with their response shapes.
  const doc = await (await stack.platformRequest("/openapi.json")).json();
  for (const [path, method] of [
    ["/webhooks", "post"],
    ["/webhooks/{id}", "put"],
    ["/webhooks/{id}/rotate-secret", "post"],
    ["/webhooks/{id}/deliveries/{deliveryId}/retry", "post"],
  ]) {
    expect({ path, method, op: Boolean(doc.paths[path]?.[method]) }).toEqual({ path, method, op: true });
  }
  const createdSchema = JSON.stringify(doc.paths["/webhooks"].post.responses);
  expect(createdSchema).toContain("secret");
});
