import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import type { Role } from "@cellar/shared/db/schema";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const keys: Partial<Record<Role, string>> = {};

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  tenant = await bootstrapTenant(stack.database.db, { name: "dsr", plan: "pro" });
  const [project] = await stack.database.sql<
    { id: string }[]
  >`select id from projects where tenant_id = ${tenant.tenantId} and is_default`;
  for (const role of ["viewer", "member", "admin"] as const) {
    const u = await createUser(stack.database.db, {
      tenantId: tenant.tenantId,
      email: `${role}@dsr.test`,
      role,
      projectIds: [project.id],
    });
    keys[role] = (await createApiKey(stack.database.db, { kind: "platform", userId: u.id })).key;
  }
  keys.owner = tenant.platformKey;
  const auth = { authorization: `Bearer ${tenant.telemetryKey}` };
  for (const [sessionId, n] of [
    ["erase-me", 3],
    ["keep-me", 1],
  ] as const) {
    for (let i = 0; i < n; i++) {
      const r = await stack.ingestRequest(
        "/raw/traces",
        chatTrace({
          sessionId,
          messages: [{ role: "user", content: `my address is ${i} Main St` }],
          reply: "noted",
          extra: { trace_id: `${sessionId}-${i}` },
        }),
        auth,
      );
      expect(r.status).toBe(200);
    }
  }
  const ev = await stack.ingestRequest(
    "/raw/events",
    { name: "feedback", service_name: "support-bot", session_id: "erase-me", timestamp: new Date().toISOString() },
    auth,
  );
  expect(ev.status).toBe(200);
  await waitFor(
    async () => {
      const [r] = await stack.database.sql<
        { n: number }[]
      >`select count(*)::int as n from session_analyses where session_id in ('erase-me', 'keep-me')`;
      return r.n === 2;
    },
    { what: "both sessions matured", timeoutMs: 30_000 },
  );
});
afterAll(() => stack.stop());

const del = (path: string, key?: string) => stack.platformRequest(path, { method: "DELETE", token: key });
const S = "/telemetry/otel/sessions/support-bot";

test("only admin and owner may delete a session; a missing or foreign one is 404; nothing changes on refusal", async () => {
  expect((await del(`${S}/erase-me`)).status).toBe(401);
  for (const role of ["viewer", "member"] as const) {
    const res = await del(`${S}/erase-me`, keys[role]);
    expect(res.status).toBe(403);
    expect((await res.json()).error).toContain("admin");
  }
  expect((await del(`${S}/no-such-session`, keys.admin)).status).toBe(404);
  expect((await del("/telemetry/otel/sessions/no-such-service/erase-me", keys.admin)).status).toBe(404);
  const other = await bootstrapTenant(stack.database.db, { name: "other" });
  expect((await del(`${S}/erase-me`, other.platformKey)).status).toBe(404);
  const [{ n }] = await stack.database.sql<
    { n: number }[]
  >`select count(*)::int as n from traces where session_id = 'erase-me'`;
  expect(n).toBe(3);
});

test("an admin's DELETE removes the session and everything under it, and only it", async () => {
  const res = await del(`${S}/erase-me`, keys.admin);
  expect(res.status).toBe(200);
  const body = await res.json();
  expect(body).toMatchObject({ serviceName: "support-bot", sessionId: "erase-me", deleted: { traces: 3, events: 1 } });
  expect(body.deleted.spans).toBeGreaterThanOrEqual(3);
  expect(body.deleted.transcriptItems).toBeGreaterThan(0);

  const sql = stack.database.sql;
  const [left] = await sql<Record<string, number>[]>`
    select (select count(*) from sessions where session_id = 'erase-me')::int as sessions,
      (select count(*) from traces where session_id = 'erase-me')::int as traces,
      (select count(*) from spans where session_id = 'erase-me')::int as spans,
      (select count(*) from events where session_id = 'erase-me')::int as events,
      (select count(*) from session_analyses where session_id = 'erase-me')::int as analyses,
      (select count(*) from trace_analyses where trace_id like 'erase-me-%')::int as trace_analyses`;
  expect(left).toEqual({ sessions: 0, traces: 0, spans: 0, events: 0, analyses: 0, trace_analyses: 0 });
  for (const path of [
    `${S}/erase-me/transcript`,
    `${S}/erase-me/traces`,
    "/telemetry/otel/trace/erase-me-0?serviceName=support-bot",
  ]) {
    expect((await stack.platformRequest(path, { token: keys.owner })).status).toBe(404);
  }
  expect((await stack.platformRequest(`${S}/keep-me/transcript`, { token: keys.owner })).status).toBe(200);
  expect((await del(`${S}/erase-me`, keys.owner)).status).toBe(404);
});

test("GET on the session path itself is still the router's 404 (contract), DELETE is the only method there", async () => {
  const res = await stack.platformRequest(`${S}/keep-me`, { token: keys.owner });
  expect(res.status).toBe(404);
  expect((await stack.platformRequest(`${S}/keep-me`, { method: "POST", token: keys.owner, body: "{}" })).status).toBe(
    404,
  );
});
