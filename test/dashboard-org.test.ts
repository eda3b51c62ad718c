// /api/v1/organization over HTTP in-process: the role checks, tenant scoping, field-naming 400s,
// and that a key, a DSN's origins, a deprovisioning made here act on ingestion and the API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { originProblem } from "@cellar/shared/auth/key-store";
import { chatTrace } from "./helpers/payloads";
import { assertDocumented, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

let stack: TestStack;
let f: PlatformFixture;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
}, 90_000);
afterAll(() => stack?.stop());

async function org(token: string, method: string, path: string, body?: unknown) {
  const res = await stack.platformRequest(`/organization${path}`, {
    method,
    token,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const ingest = (key: string, origin?: string) =>
  stack.ingestRequest(
    "/raw/traces",
    chatTrace({ sessionId: `org-${crypto.randomUUID()}`, messages: [{ role: "user", content: "hi" }], reply: "hey" }),
    { authorization: `Bearer ${key}`, ...(origin ? { origin } : {}) },
  );

describe("reads by role", () => {
  test("every role reads the organization; a viewer sees only their projects", async () => {
    const owner = await org(f.keys.owner, "GET", "");
    expect(owner.status).toBe(200);
    assertDocumented(stack, "GET", "/organization", owner.body);
    expect(owner.body).toMatchObject({ name: "acme", plan: "pro", webhooksEnabled: false, retentionDays: null });
    expect(owner.body.projects.map((p: any) => p.name).sort()).toEqual(["billing", "default"]);
    const viewer = await org(f.keys.viewer, "GET", "");
    expect(viewer.status).toBe(200);
    expect(viewer.body.projects.map((p: any) => p.name)).toEqual(["default"]);
    expect(viewer.body.projects[0].services).toContain("support-bot");
  });

  test("members are listed for every role; keys only for admin and owner", async () => {
    const members = await org(f.keys.member, "GET", "/members");
    expect(members.status).toBe(200);
    assertDocumented(stack, "GET", "/organization/members", members.body);
    const gone = members.body.members.find((m: any) => m.email === "gone@acme.test");
    expect(gone.state).toBe("deprovisioned");
    expect(members.body.members.some((m: any) => m.email === "owner@globex.test")).toBe(false);
    for (const k of [f.keys.viewer, f.keys.member])
      expect(await org(k, "GET", "/keys")).toEqual({
        status: 403,
        body: { error: "managing the organization needs the admin or owner role" },
      });
    const keys = await org(f.keys.admin, "GET", "/keys");
    expect(keys.status).toBe(200);
    assertDocumented(stack, "GET", "/organization/keys", keys.body);
    expect(keys.body.keys.every((k: any) => k.kind !== "platform")).toBe(true);
    expect(JSON.stringify(keys.body)).not.toContain(f.bad.serverDsn);
  });

  test("a telemetry key is not a platform credential here either (bare 401)", async () => {
    const r = await org(f.bad.telemetry, "GET", "");
    expect(r).toEqual({ status: 401, body: { error: "unauthorized" } });
  });
});

describe("keys and DSNs", () => {
  test("create a server DSN: shown once, works for ingestion, last used is recorded, revoke stops it", async () => {
    const created = await org(f.keys.admin, "POST", "/keys", {
      kind: "dsn-server",
      serviceName: "support-bot",
      name: "backend",
    });
    expect(created.status).toBe(201);
    assertDocumented(stack, "POST", "/organization/keys", created.body);
    expect(created.body.key).toStartWith("svc-ing-s-");
    expect((await ingest(created.body.key)).status).toBe(200);
    const listed = await waitFor(
      async () => {
        const k = (await org(f.keys.admin, "GET", "/keys")).body.keys.find((x: any) => x.id === created.body.id);
        return k?.lastUsedAt ? k : null;
      },
      { what: "lastUsedAt" },
    );
    expect(listed).toMatchObject({ name: "backend", serviceName: "support-bot", revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.body.key);
    expect((await org(f.keys.admin, "DELETE", `/keys/${created.body.id}`)).status).toBe(204);
    await waitFor(async () => (await ingest(created.body.key)).status === 401, { what: "the revoked DSN refused" });
    expect((await org(f.keys.admin, "DELETE", `/keys/${created.body.id}`)).status).toBe(404);
  });

  test("a client DSN's allowed origins: exact origins only, edited here, enforced by ingest", async () => {
    const bad = await org(f.keys.owner, "POST", "/keys", {
      kind: "dsn-client",
      serviceName: "support-bot",
      allowedOrigins: ["https://app.example.com/"],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toStartWith('invalid allowedOrigins: "https://app.example.com/" is not an exact origin');
    const created = await org(f.keys.owner, "POST", "/keys", {
      kind: "dsn-client",
      serviceName: "support-bot",
      allowedOrigins: ["https://app.example.com"],
    });
    expect(created.status).toBe(201);
    expect((await ingest(created.body.key, "https://app.example.com")).status).toBe(200);
    expect((await ingest(created.body.key, "https://evil.example.com")).status).toBe(403);
    const patched = await org(f.keys.owner, "PATCH", `/keys/${created.body.id}`, {
      allowedOrigins: ["https://evil.example.com"],
    });
    expect(patched.status).toBe(200);
    expect(patched.body.origins).toEqual(["https://evil.example.com"]);
    await waitFor(async () => (await ingest(created.body.key, "https://evil.example.com")).status === 200, {
      what: "the new origin allowed",
    });
    expect((await ingest(created.body.key, "https://app.example.com")).status).toBe(403);
    // Origins on a server DSN, a DSN without a service, an unknown field: 400 naming the field.
    expect(
      (
        await org(f.keys.owner, "POST", "/keys", {
          kind: "dsn-server",
          serviceName: "x",
          allowedOrigins: ["https://a.b"],
        })
      ).body.error,
    ).toBe("invalid allowedOrigins: applies to dsn-client keys only");
    expect((await org(f.keys.owner, "POST", "/keys", { kind: "dsn-server" })).body.error).toBe(
      "invalid serviceName: is required for dsn-server keys",
    );
    expect((await org(f.keys.owner, "POST", "/keys", { kind: "telemetry", extra: 1 })).body.error).toBe(
      "invalid extra: unknown field",
    );
    expect((await org(f.keys.owner, "POST", "/keys", { kind: "platform" })).status).toBe(400);
  });

  test("the exact-origin rule: whatever string, accepted only when it is its own URL origin", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.webUrl(),
          fc.string(),
          fc.webUrl().map((u) => new URL(u).origin),
        ),
        (s) => {
          const problem = originProblem(s);
          let exact = false;
          try {
            const u = new URL(s);
            exact = (u.protocol === "https:" || u.protocol === "http:") && u.origin === s;
          } catch {}
          expect(problem === null).toBe(exact);
        },
      ),
    );
  });

  test("another tenant's key is not found; a platform key cannot be revoked here", async () => {
    const b = await org(f.b.platformKey, "DELETE", `/keys/${f.a.telemetryKeyId}`);
    expect(b.status).toBe(404);
    expect((await org(f.keys.owner, "DELETE", `/keys/${f.a.platformKeyId}`)).status).toBe(404);
    expect((await org(f.keys.owner, "DELETE", "/keys/not-a-uuid")).status).toBe(400);
  });
});

describe("members", () => {
  test("invite, accept, role change rules, deprovision stops their keys", async () => {
    const inv = await org(f.keys.admin, "POST", "/members", {
      email: "new.member@acme.test",
      role: "viewer",
      projectIds: [f.ids.billingProjectId],
    });
    expect(inv.status).toBe(201);
    assertDocumented(stack, "POST", "/organization/members", inv.body);
    expect(inv.body.path).toBe(`/invite#${inv.body.token}`);
    expect(
      (await org(f.keys.admin, "POST", "/members", { email: "new.member@acme.test", role: "viewer" })).status,
    ).toBe(409);
    // An admin cannot make an owner; an owner can.
    expect((await org(f.keys.admin, "POST", "/members", { email: "o2@acme.test", role: "owner" })).status).toBe(403);
    const accepted = await stack.platform.handle(
      new Request("http://platform.test/auth/invitations/accept", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: inv.body.token, password: "a long enough password" }),
      }),
    );
    expect(accepted.status).toBe(200);
    const { token } = (await accepted.json()) as { token: string };
    const asNew = (path: string) =>
      stack.platform.handle(
        new Request(`http://platform.test/api/v1/organization${path}`, {
          headers: { authorization: `Bearer ${token}` },
        }),
      );
    expect((await asNew("")).status).toBe(200);
    expect((await asNew("/keys")).status).toBe(403);
    const id = inv.body.userId;
    // Role change: admin to member, not to owner; not your own; projects replaced.
    expect((await org(f.keys.admin, "PATCH", `/members/${id}`, { role: "member" })).body).toEqual({
      id,
      role: "member",
    });
    expect((await org(f.keys.admin, "PATCH", `/members/${id}`, { role: "owner" })).status).toBe(403);
    expect((await org(f.keys.admin, "PATCH", `/members/${id}`, { role: "superuser" })).body.error).toStartWith(
      "invalid role",
    );
    const me = (await org(f.keys.admin, "GET", "/members")).body.members.find(
      (m: any) => m.email === "admin@acme.test",
    );
    expect((await org(f.keys.admin, "PATCH", `/members/${me.id}`, { role: "viewer" })).status).toBe(403);
    expect((await org(f.keys.admin, "PATCH", `/members/${id}`, { projectIds: [] })).body).toEqual({ id, projects: [] });
    // The last owner stays owner.
    expect((await org(f.keys.owner, "PATCH", `/members/${f.a.ownerId}`, { role: "admin" })).status).toBe(403);
    // Deprovision: the sign-in and the user's platform key stop at once.
    expect((await org(f.keys.viewer, "POST", `/members/${id}/deprovision`)).status).toBe(403);
    expect((await org(f.keys.admin, "POST", `/members/${id}/deprovision`)).status).toBe(200);
    expect((await asNew("")).status).toBe(401);
    expect((await org(f.keys.admin, "POST", `/members/${id}/deprovision`)).status).toBe(404);
    // Another tenant's member is not found.
    expect((await org(f.b.platformKey, "PATCH", `/members/${id}`, { role: "viewer" })).status).toBe(404);
  });

  test("the last owner cannot be deprovisioned or demoted, even by the shared function the CLI calls", async () => {
    const { deprovisionUser } = await import("@cellar/shared/admin/tenancy");
    const { updateUserRole } = await import("@cellar/shared/admin/operators");
    await expect(deprovisionUser(stack.database.db, { id: f.a.ownerId })).rejects.toThrow("at least one owner");
    await expect(updateUserRole(stack.database.db, { id: f.a.ownerId, role: "viewer" })).rejects.toThrow(
      "at least one owner",
    );
  });
});

test("projects and services: created by admins, 409 on a duplicate, 403 for a member", async () => {
  const p = await org(f.keys.admin, "POST", "/projects", { name: "research" });
  expect(p.status).toBe(201);
  expect((await org(f.keys.admin, "POST", "/projects", { name: "research" })).status).toBe(409);
  const s = await org(f.keys.admin, "POST", "/services", { name: "lab-bot", projectId: p.body.id });
  expect(s.status).toBe(201);
  expect((await org(f.keys.member, "POST", "/projects", { name: "x" })).status).toBe(403);
  expect((await org(f.keys.admin, "POST", "/services", { name: "bad\nname" })).body.error).toBe(
    "invalid name: must not be blank or contain control characters",
  );
  const o = await org(f.keys.owner, "GET", "");
  expect(o.body.projects.find((x: any) => x.name === "research").services).toEqual(["lab-bot"]);
});

test("the organization routes are in the OpenAPI document", async () => {
  const doc = (await (await stack.platformRequest("/openapi.json")).json()) as { paths: Record<string, unknown> };
  for (const path of ["/organization", "/organization/keys", "/organization/keys/{id}", "/organization/members/{id}"])
    expect(Object.keys(doc.paths)).toContain(path);
});
