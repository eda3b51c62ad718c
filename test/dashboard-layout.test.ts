// Every dashboard page at 1,280 and 390 px with long unbroken content (URLs, base64, JSON, ids,
// emails) in every field a tenant controls: the page never scrolls sideways
// (document.documentElement.scrollWidth <= the viewport width). Real Chromium against the
// platform listening on a port, the processor maturing real sessions on NATS and Postgres.
// Screenshots: test-output/dashboard-layout/ (or $TEST_OUTPUT_DIR/dashboard-layout/).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { bootstrapTenant, createProject, createService, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { launchChromium, testOutputDir } from "./helpers/browser";
import { chatTrace } from "./helpers/payloads";
import { unsettledSessions } from "./helpers/platform";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const PASSWORD = "correct horse battery staple";
/** A 300-character URL without a break opportunity (the defect: the page grew to 2,218 px). */
const LONG_URL = `https://example.com/${"a1b2c3d4e5".repeat(28)}`;
const BASE64 = Buffer.from(crypto.getRandomValues(new Uint8Array(450))).toString("base64");
const JSON_BLOB = JSON.stringify(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`key${i}`, `value${i}x`])));
const unbroken = (prefix: string, n: number) => (prefix + "x".repeat(n)).slice(0, n);
const SERVICE = unbroken("svc-", 200);
const SESSION = unbroken("session-", 300);
const TRACE = unbroken("trace-", 250);
const ENVIRONMENT = unbroken("env-", 128);
const MODEL = unbroken("model-", 240); // the response model adds "-2024-07-18" (256 max)
const TOOL = unbroken("tool_", 64);
// Labels of at most 63 characters: the sign-in form's type=email checks them.
const EMAIL = `${"o".repeat(60)}@${"example".repeat(9)}.${"domain".repeat(10)}.${"cellar".repeat(10)}.test`;

const resolveDns = async () => ["93.184.216.34"];
let stack: TestStack;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let base: string;
let issueId: string | undefined;
let webhookId: string;
const shots = testOutputDir("dashboard-layout");

beforeAll(async () => {
  const [launched] = await Promise.all([
    launchChromium(),
    (async () => {
      stack = await createTestStack({ windowSeconds: 1, webhooks: { resolveDns } });
    })(),
  ]);
  browser = launched;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const db = stack.database.db;
  const sql = stack.database.sql;
  const t = await bootstrapTenant(db, { name: unbroken("organization-", 300), plan: "pro", email: EMAIL });
  await sql`update tenants set webhooks_enabled = true where id = ${t.tenantId}`;
  await setPassword(db, { userId: t.ownerId, password: PASSWORD });
  const project = await createProject(db, { tenantId: t.tenantId, name: unbroken("project-", 200) });
  await createService(db, { tenantId: t.tenantId, name: SERVICE, projectId: project.id });
  await createUser(db, { tenantId: t.tenantId, email: `${"m".repeat(64)}@${"b".repeat(150)}.test`, role: "member" });
  await createApiKey(db, { kind: "dsn-server", tenantId: t.tenantId, serviceName: SERVICE });
  await createApiKey(db, {
    kind: "dsn-client",
    tenantId: t.tenantId,
    serviceName: SERVICE,
    origins: [`https://${"sub".repeat(60)}.example.com`],
  });
  const messages = [
    { role: "system", content: `Rules: ${JSON_BLOB}` },
    { role: "user", content: `Open ${LONG_URL} and decode ${BASE64}` },
  ];
  const toolCall = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: TOOL, arguments: JSON_BLOB } }],
  };
  const start = new Date(Date.now() - 30_000);
  const traces = [
    chatTrace({ sessionId: SESSION, serviceName: SERVICE, messages, reply: toolCall, model: MODEL, start }),
    chatTrace({
      sessionId: SESSION,
      serviceName: SERVICE,
      messages: [...messages, toolCall, { role: "tool", tool_call_id: "call_1", content: BASE64 }],
      reply: `See ${LONG_URL} for the answer, or ${BASE64}`,
      model: MODEL,
      start: new Date(start.getTime() + 2000),
      extra: { trace_id: TRACE, environment: ENVIRONMENT },
    }),
  ];
  for (const tr of traces) {
    const r = await stack.ingestRequest("/raw/traces", tr, { authorization: `Bearer ${t.telemetryKey}` });
    expect([r.status, await r.text()]).toEqual([200, expect.any(String)]);
  }
  const ev = await stack.ingestRequest(
    "/raw/events",
    {
      name: unbroken("event.", 256),
      service_name: SERVICE,
      session_id: SESSION,
      timestamp: new Date(start.getTime() + 1000).toISOString(),
      severity_number: 17,
      attributes: { url: LONG_URL, blob: BASE64 },
      body: { json: JSON_BLOB },
      environment: ENVIRONMENT,
      trace_id: TRACE,
    },
    { authorization: `Bearer ${t.telemetryKey}` },
  );
  expect(ev.status).toBe(200);
  // Settled on its event too: a re-maturation after the rows below would replace the finding.
  // Every trace stored as well: the processor may store the event before a trace sent earlier.
  await waitFor(
    async () =>
      (await sql`select 1 from events`).length > 0 &&
      (await sql`select 1 from traces`).length === traces.length &&
      (await unsettledSessions(stack)) === 0,
    {
      what: "the long session matured",
      timeoutMs: 30_000,
    },
  );
  const [svc] = await sql<{ id: string }[]>`select id from trace_services where name = ${SERVICE}`;
  const [sess] = await sql<{ id: string }[]>`select id from sessions where session_id = ${SESSION}`;
  // An issue and a finding whose title is tenant data too (a detector may quote the conversation).
  const [issue] = await sql<{ id: string }[]>`
    insert into issues (tenant_id, trace_service_id, fingerprint, detector, title, severity, first_seen_at, last_seen_at, occurrences, affected_sessions)
    values (${t.tenantId}, ${svc.id}, 'layout:long', 'test_detector', ${`Failed to fetch ${LONG_URL}`}, 'high', now(), now(), 1, 1) returning id`;
  issueId = issue.id;
  await sql`
    insert into findings (tenant_id, trace_service_id, session_pk, session_id, issue_id, trace_id, span_id, detector, fingerprint, severity, title, evidence, occurred_at)
    values (${t.tenantId}, ${svc.id}, ${sess.id}, ${SESSION}, ${issue.id}, ${TRACE}, null, 'test_detector', 'layout:long', 'high', ${`Failed to fetch ${LONG_URL}`}, ${sql.json({ url: LONG_URL })}, now())`;
  const hook = await stack.platformRequest("/webhooks", {
    method: "POST",
    token: t.platformKey,
    body: JSON.stringify({
      trace_service_id: svc.id,
      name: unbroken("hook-", 200),
      url: LONG_URL,
      event_types: ["session.matured"],
    }),
  });
  expect(hook.status).toBe(201);
  webhookId = ((await hook.json()) as { id: string }).id;
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${stack.platform.server!.port}`;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.platform.stop().catch(() => {});
  await stack?.stop();
});

const q = (s: string) => encodeURIComponent(s);

/** Every page a signed-in owner can open, and text that shows it has rendered its data. */
function pages(): Array<{ name: string; path: string; ready: string }> {
  return [
    { name: "overview", path: `/overview?service=${q(SERVICE)}`, ready: "By model" },
    { name: "sessions", path: `/sessions?service=${q(SERVICE)}`, ready: "1–1 of 1" },
    { name: "session", path: `/sessions/${q(SERVICE)}/${q(SESSION)}`, ready: "See https://example.com/" },
    { name: "trace", path: `/traces/${q(SERVICE)}/${q(TRACE)}`, ready: "Spans (" },
    { name: "issues", path: `/issues?service=${q(SERVICE)}`, ready: "Failed to fetch" },
    { name: "issue", path: `/issues/${q(SERVICE)}/${issueId}`, ready: "Affected sessions" },
    { name: "webhooks", path: "/webhooks", ready: "hook-xxx" },
    { name: "webhook", path: `/webhooks/${webhookId}`, ready: "Delivery" },
    { name: "settings", path: "/settings", ready: "Platform API keys" },
    { name: "organization", path: "/organization", ready: "Every service (telemetry keys)" },
    { name: "first-trace", path: "/first-trace", ready: "A DSN for your service" },
    { name: "ledger", path: `/ledger?service=${q(SERVICE)}&window=1h`, ready: "Accepted by ingest" },
  ];
}

async function overflow(): Promise<{ scrollWidth: number; viewport: number; widest: string; spilling: string[] }> {
  return page.evaluate(() => {
    const viewport = window.innerWidth;
    // The element sticking out furthest, to name the culprit in the failure message.
    let widest = "";
    let right = viewport;
    const clipped = (el: Element) => {
      for (let a = el.parentElement; a; a = a.parentElement)
        if (getComputedStyle(a).overflowX !== "visible") return a !== document.documentElement && a !== document.body;
      return false;
    };
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      if (clipped(el)) continue; // inside a box that scrolls sideways on its own (tables)
      const r = el.getBoundingClientRect();
      if (r.right > right + 0.5) {
        right = r.right;
        widest = `${el.tagName.toLowerCase()}.${(el as HTMLElement).className} (${Math.round(r.right)} px)`;
      }
    }
    // Text running out of its own box into its neighbour's (the email into the role beside it)
    // does not widen the page: a block whose content is wider than it and not scrolled.
    const spilling: string[] = [];
    for (const el of Array.from(document.body.querySelectorAll("*")) as HTMLElement[]) {
      const style = getComputedStyle(el);
      if (style.display === "inline" || style.display === "contents" || style.overflowX !== "visible") continue;
      if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
        spilling.push(`${el.tagName.toLowerCase()}.${el.className} (${el.scrollWidth} > ${el.clientWidth})`);
    }
    return { scrollWidth: document.documentElement.scrollWidth, viewport, widest, spilling };
  });
}

test("signs in with a 250-character email", async () => {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
});

for (const width of [1280, 390]) {
  test(`every page at ${width} px: no sideways scrolling with long unbroken tenant content`, async () => {
    await page.setViewportSize({ width, height: 900 });
    const failures: string[] = [];
    for (const p of pages()) {
      await page.goto(`${base}${p.path}`);
      await page.getByText(p.ready).first().waitFor();
      // Open every collapsible so tool calls, results and span attributes are measured too.
      await page.$$eval("details", (all) => {
        for (const d of all) (d as HTMLDetailsElement).open = true;
      });
      const o = await overflow();
      if (o.scrollWidth > o.viewport) failures.push(`${p.name}: ${o.scrollWidth} px > ${o.viewport} px, ${o.widest}`);
      for (const s of o.spilling) failures.push(`${p.name}: text spills out of ${s}`);
      await page.screenshot({ path: join(shots, `${p.name}-${width}.png`), fullPage: true });
    }
    expect(failures).toEqual([]);
  });
}
