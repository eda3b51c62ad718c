import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import {
  bootstrapTenant,
  createProject,
  createService,
  createUser,
  deprovisionUser,
} from "@cellar/shared/admin/tenancy";
import { createApiKey, revokeApiKey } from "@cellar/shared/auth/key-store";
import type { Role } from "@cellar/shared/db/schema";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { itemRowsSql } from "@cellar/shared/analysis/transcript-rows";
import { deriveSpans } from "@cellar/shared/spans";
import { chatTrace } from "./payloads";
import { unsettledSessions } from "./settled";
import { waitFor, type TestStack } from "./stack";

export { unsettledSessions };

/**
 * A realistic platform fixture: tenant A (plan pro) with two services in two projects, users of
 * every role, every kind of credential, matured sessions with tool calls and events, plus an
 * issue/findings, an intent and a tool schema written directly; tenant B (plan free) with its own
 * data. Everything the read API tests need, built once per test file.
 */
export async function seedPlatform(stack: TestStack) {
  const db = stack.database.db;
  const a = await bootstrapTenant(db, { name: "acme", plan: "pro" });
  const billingProject = await createProject(db, { tenantId: a.tenantId, name: "billing" });
  await createService(db, { tenantId: a.tenantId, name: "billing-bot", projectId: billingProject.id });
  const [defaultProject] = await stack.database.sql<
    { id: string }[]
  >`select id from projects where tenant_id = ${a.tenantId} and is_default`;

  const keyFor = async (role: Role, projectIds: string[], email: string) => {
    const u = await createUser(db, { tenantId: a.tenantId, email, role, projectIds });
    return { userId: u.id, key: (await createApiKey(db, { kind: "platform", userId: u.id })).key };
  };
  const admin = await keyFor("admin", [], "admin@acme.test");
  const member = await keyFor("member", [defaultProject.id], "member@acme.test");
  const viewer = await keyFor("viewer", [defaultProject.id], "viewer@acme.test");
  const outsider = await keyFor("member", [billingProject.id], "outsider@acme.test");
  const revoked = await createApiKey(db, { kind: "platform", userId: a.ownerId });
  await revokeApiKey(db, { id: revoked.id });
  const gone = await keyFor("admin", [], "gone@acme.test");
  await deprovisionUser(db, { id: gone.userId });
  const serverDsn = await createApiKey(db, { kind: "dsn-server", tenantId: a.tenantId, serviceName: "support-bot" });
  const clientDsn = await createApiKey(db, { kind: "dsn-client", tenantId: a.tenantId, serviceName: "support-bot" });

  const b = await bootstrapTenant(db, { name: "globex", plan: "free", email: "owner@globex.test" });

  const t0 = new Date(Date.now() - 60_000);
  const at = (s: number) => new Date(t0.getTime() + s * 1000);
  const tools = [
    {
      type: "function",
      function: {
        name: "lookup_invoice",
        description: "Find an invoice",
        parameters: { type: "object", properties: { number: { type: "string" } } },
      },
    },
  ];
  const history = [
    { role: "system", content: "You are a billing assistant." },
    { role: "user", content: "Why was I charged twice for invoice 42?" },
  ];
  const toolCall = {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "call_1",
        type: "function",
        function: { name: "lookup_invoice", arguments: JSON.stringify({ number: "42", padding: "x".repeat(800) }) },
      },
    ],
  };
  const traces = [
    chatTrace({
      sessionId: "conv-1",
      messages: history,
      reply: toolCall,
      finishReason: "tool_calls",
      start: at(0),
      extra: { trace_id: "tr-1", request: { model: "gpt-4o-mini", messages: history, tools } },
    }),
    chatTrace({
      sessionId: "conv-1",
      start: at(5),
      extra: { trace_id: "tr-2" },
      messages: [
        ...history,
        toolCall,
        { role: "tool", tool_call_id: "call_1", content: "Invoice 42: charged once, refund pending" },
      ],
      reply: {
        role: "assistant",
        content: "You were charged once; the second charge is a pending refund.",
        reasoning_content: "The tool says one charge.",
      },
    }),
    chatTrace({
      sessionId: "conv-2",
      messages: [{ role: "user", content: "hello" }],
      reply: "Hi! How can I help?",
      start: at(10),
      extra: { trace_id: "tr-3" },
      usage: { prompt_tokens: 5000, completion_tokens: 2000 },
    }),
    chatTrace({
      sessionId: "b-1",
      serviceName: "billing-bot",
      messages: [{ role: "user", content: "refund" }],
      reply: "Done.",
      start: at(12),
      extra: { trace_id: "tr-b1" },
    }),
  ];
  const auth = (k: string) => ({ authorization: `Bearer ${k}` });
  for (const tr of traces) await expectOk(stack.ingestRequest("/raw/traces", tr, auth(a.telemetryKey)));
  await expectOk(
    stack.ingestRequest(
      "/raw/events",
      {
        name: "payment.failed",
        service_name: "support-bot",
        session_id: "conv-1",
        timestamp: at(3).toISOString(),
        severity_number: 17,
        attributes: { "http.status": 502 },
        body: { reason: "gateway timeout" },
        environment: "test",
        trace_id: "tr-1",
      },
      auth(a.telemetryKey),
    ),
  );
  await expectOk(
    stack.ingestRequest(
      "/raw/traces",
      chatTrace({
        sessionId: "g-1",
        serviceName: "other-bot",
        messages: [{ role: "user", content: "hi" }],
        reply: "hey",
        start: at(1),
        extra: { trace_id: "tr-g1" },
      }),
      auth(b.telemetryKey),
    ),
  );

  const sql = stack.database.sql;
  await waitFor(
    async () => {
      // Every session settled on everything sent: conv-1's event can land after its traces
      // matured, and the re-maturation it causes would otherwise run after the fixture's own
      // rows below are written (and replace them).
      const [r] = await sql<{ n: number; t: number; e: number }[]>`
        select (select count(*) from session_analyses)::int as n, (select count(*) from trace_analyses)::int as t,
          (select count(*) from events)::int as e`;
      return r.n >= 4 && r.t >= 5 && r.e >= 1 && (await unsettledSessions(stack)) === 0;
    },
    { what: "every session and trace matured", timeoutMs: 30_000 },
  );

  // Exotic analysis rows written directly, so these reads are tested whatever the detectors find.
  const [svc] = await sql<
    { id: string }[]
  >`select id from trace_services where tenant_id = ${a.tenantId} and name = 'support-bot'`;
  const sessions = await sql<
    { id: string; session_id: string }[]
  >`select id, session_id from sessions where trace_service_id = ${svc.id} order by session_id`;
  const pk = Object.fromEntries(sessions.map((s) => [s.session_id, s.id]));
  const [issue] = await sql<{ id: string }[]>`
    insert into issues (tenant_id, trace_service_id, fingerprint, detector, title, severity, first_seen_at, last_seen_at, occurrences, affected_sessions)
    values (${a.tenantId}, ${svc.id}, 'test:double-charge', 'test_detector', 'Customer reports double charge', 'high', ${at(1)}, ${at(11)}, 2, 2) returning id`;
  await sql`
    insert into findings (tenant_id, trace_service_id, session_pk, session_id, issue_id, trace_id, span_id, detector, fingerprint, severity, title, evidence, occurred_at)
    values (${a.tenantId}, ${svc.id}, ${pk["conv-1"]}, 'conv-1', ${issue.id}, 'tr-1', null, 'test_detector', 'test:double-charge', 'high', 'Double charge', ${sql.json({ itemId: "x" })}, ${at(1)}),
           (${a.tenantId}, ${svc.id}, ${pk["conv-2"]}, 'conv-2', ${issue.id}, 'tr-3', null, 'test_detector', 'test:double-charge', 'high', 'Double charge', ${sql.json({})}, ${at(11)})`;
  const [intent] = await sql<{ id: string }[]>`
    insert into intent_definitions (tenant_id, trace_service_id, name, description) values (${a.tenantId}, ${svc.id}, 'billing_question', 'Questions about charges') returning id`;
  await sql`insert into session_intents (session_pk, intent_id, tenant_id, score, evidence) values (${pk["conv-1"]}, ${intent.id}, ${a.tenantId}, 0.9, ${sql.json({ text: "charged twice" })})`;
  const [schema] = await sql<{ id: string }[]>`
    insert into tool_schemas (tenant_id, trace_service_id, name, schema_hash, schema, first_seen_at, last_seen_at)
    values (${a.tenantId}, ${svc.id}, 'test_tool', 'hash-1', ${sql.json({ name: "test_tool" })}, ${at(0)}, ${at(0)}) returning id`;
  await sql`insert into session_tool_schemas (session_pk, tenant_id, tool_schema_id) values (${pk["conv-1"]}, ${a.tenantId}, ${schema.id}) on conflict do nothing`;
  await sql`update sessions set labels = '["vip"]'::jsonb where id = ${pk["conv-1"]}`;
  // An llm span of tr-2, derived from its stored payload as every span read does (migration 0017).
  const [tr2] = await sql<{ payload_z: Uint8Array }[]>`
    select z.payload_z from traces t join trace_payloads z on z.trace_pk = t.id where t.trace_service_id = ${svc.id} and t.trace_id = 'tr-2'`;
  const span = { span_id: deriveSpans("tr-2", decodePayload(tr2)).find((s) => s.kind === "llm")!.spanId };
  const [item] = await sql.unsafe<{ item_id: string }[]>(
    `select item_id from (${itemRowsSql({ session: "$1::uuid" })}) ti where kind = 'assistant' order by position desc limit 1`,
    [pk["conv-1"]],
  );

  return {
    /** When the fixture's timeline starts: conv-1 at t0, conv-2 at t0 + 10 s. */
    t0,
    a,
    b,
    keys: { owner: a.platformKey, admin: admin.key, member: member.key, viewer: viewer.key, outsider: outsider.key },
    bad: {
      revoked: revoked.key,
      deprovisioned: gone.key,
      telemetry: a.telemetryKey,
      serverDsn: serverDsn.key,
      clientDsn: clientDsn.key,
    },
    ids: { issueId: issue.id, spanId: span.span_id, itemId: item.item_id, billingProjectId: billingProject.id },
  };
}
export type PlatformFixture = Awaited<ReturnType<typeof seedPlatform>>;

async function expectOk(res: Promise<Response>) {
  const r = await res;
  if (r.status !== 200) throw new Error(`ingest answered ${r.status}: ${await r.text()}`);
}

/** Every read endpoint, with tenant A's ids. `named` = the path or body names support-bot. */
export function readEndpoints(f: PlatformFixture) {
  const S = "/telemetry/otel/sessions/support-bot/conv-1";
  const post = (path: string, body: unknown) => ({ method: "POST", path, body });
  return [
    { method: "GET", path: `${S}/transcript` },
    { method: "GET", path: `${S}/transcript/items/${f.ids.itemId}` },
    ...[
      "traces",
      "spans",
      "tree",
      "graph",
      "events",
      "tldr",
      "problem-analysis",
      "cost-by-model",
      "cost-breakdown",
      "tool-costs",
      "tool-schemas",
    ].map((x) => ({ method: "GET", path: `${S}/${x}` })),
    { method: "GET", path: "/telemetry/metrics/session/support-bot/conv-1" },
    { method: "GET", path: "/telemetry/metrics/session/conv-1/turns", bareId: true },
    { method: "GET", path: "/telemetry/otel/sessions/conv-1/intents?trace_service_name=support-bot" },
    post("/telemetry/otel/sessions/filtered", {
      serviceName: "support-bot",
      filters: [{ field: "sessionId", operator: "equals", value: "conv-1" }],
    }),
    { method: "GET", path: "/telemetry/otel/trace/tr-1?serviceName=support-bot" },
    { method: "GET", path: "/telemetry/otel/spans/support-bot/tr-1" },
    { method: "GET", path: `/telemetry/otel/spans/${f.ids.spanId}`, bareId: true },
    { method: "GET", path: "/telemetry/otel/events/support-bot/tr-1" },
    { method: "GET", path: "/telemetry/metrics/trace/tr-1", bareId: true },
    post("/telemetry/otel/traces/filtered", { serviceName: "support-bot" }),
    post("/telemetry/otel/issues/filtered", { service_name: "support-bot" }),
    post("/telemetry/otel/issues/support-bot/stats", {}),
    { method: "GET", path: `/telemetry/otel/issues/${f.ids.issueId}/breakdown?service_name=support-bot` },
    post("/telemetry/otel/findings/filtered", { service_name: "support-bot" }),
    { method: "GET", path: "/telemetry/otel/findings/support-bot/stats" },
  ] as Array<{ method: string; path: string; body?: unknown; bareId?: boolean }>;
}

export async function call(
  stack: TestStack,
  e: { method: string; path: string; body?: unknown },
  headers: Record<string, string> = {},
) {
  const res = await stack.platformRequest(e.path, {
    method: e.method,
    headers,
    ...(e.body !== undefined ? { body: JSON.stringify(e.body) } : {}),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

/**
 * A platform read for tests that compare every read's answer before and after a change (the
 * upgrade tests): a 429 of the platform key's own limit (docs/platform-api.md "Limits": 50/s,
 * burst 200) is waited out and the read asked again, since such a test reads hundreds of
 * endpoints in a few seconds on a fast machine and the limit is not what it checks. Any other
 * answer is returned, as status and raw text.
 */
export async function requestPaced(stack: TestStack, path: string, init: RequestInit = {}) {
  for (let tries = 0; ; tries++) {
    const res = await stack.platformRequest(path, init);
    const text = await res.text();
    if (res.status !== 429 || !text.includes("this platform key") || tries >= 20) return { status: res.status, text };
    await Bun.sleep(500);
  }
}

/** `call`, through requestPaced. */
export async function callPaced(
  stack: TestStack,
  e: { method: string; path: string; body?: unknown },
  headers: Record<string, string> = {},
) {
  const { status, text } = await requestPaced(stack, e.path, {
    method: e.method,
    headers,
    ...(e.body !== undefined ? { body: JSON.stringify(e.body) } : {}),
  });
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status, body };
}

/** The documented 200 schema of the route serving `path` (from the route's own detail). */
export function documentedSchema(stack: TestStack, method: string, path: string): TSchema {
  const clean = `/api/v1${path.split("?")[0]}`;
  const route = stack.platform.routes.find((r: any) => {
    if (r.method !== method) return false;
    const re = new RegExp(`^${r.path.replace(/:[A-Za-z0-9_]+/g, "[^/]+")}$`);
    return re.test(clean);
  }) as any;
  const schema = route?.hooks?.detail?.["x-cellar-response"];
  if (!schema) throw new Error(`no documented response for ${method} ${path}`);
  return schema;
}

/** Throws with the first mismatches when `body` does not match the documented response. */
export function assertDocumented(stack: TestStack, method: string, path: string, body: unknown) {
  const schema = documentedSchema(stack, method, path);
  if (Value.Check(schema, body)) return;
  const errors = [...Value.Errors(schema, body)].slice(0, 5).map((e) => `${e.path}: ${e.message}`);
  throw new Error(`${method} ${path} does not match its documented schema: ${errors.join("; ")}`);
}
