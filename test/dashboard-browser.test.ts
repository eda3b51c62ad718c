import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { createUser } from "@cellar/shared/admin/tenancy";
import { chatTrace } from "./helpers/payloads";
import { seedPlatform, type PlatformFixture } from "./helpers/platform";
import { stubDns } from "./helpers/dns";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { createReceiver } from "./helpers/webhooks";
import { launchChromium, testOutputDir } from "./helpers/browser";

// The dashboard in real headless Chromium against the real apps (platform over HTTP, processor,
// dispatcher, NATS, Postgres); only the webhook receiver (msw) and its DNS answer are fake.
// One browser, one page, steps in order: each test starts where the previous one stopped.
// Screenshots: test-output/dashboard/ (or $TEST_OUTPUT_DIR/dashboard/).

const PASSWORD = "correct horse battery staple";
const EXTRA_SESSIONS = 60; // + 2 seeded = 62: two pages of 50
const resolveDns = stubDns();
let stack: TestStack;
let f: PlatformFixture;
let receiver: Awaited<ReturnType<typeof createReceiver>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let base: string;
const shots = testOutputDir("dashboard");
const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

beforeAll(async () => {
  const [launched] = await Promise.all([
    launchChromium(),
    (async () => {
      stack = await createTestStack({ windowSeconds: 1, webhooks: { resolveDns } });
      f = await seedPlatform(stack);
    })(),
  ]);
  browser = launched;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const sql = stack.database.sql;
  await sql`update tenants set webhooks_enabled = true where id = ${f.a.tenantId}`;
  await setPassword(stack.database.db, { userId: f.a.ownerId, password: PASSWORD });
  const [viewer] = await sql<{ id: string }[]>`select id from users where email = 'viewer@acme.test'`;
  await setPassword(stack.database.db, { userId: viewer.id, password: PASSWORD });
  // Enough sessions for two pages; they need not mature to be listed.
  await Promise.all(
    Array.from({ length: EXTRA_SESSIONS }, (_, i) =>
      stack.ingestRequest(
        "/raw/traces",
        chatTrace({
          sessionId: `bulk-${String(i).padStart(3, "0")}`,
          messages: [{ role: "user", content: `question ${i}` }],
          reply: `answer ${i}`,
        }),
        {
          authorization: `Bearer ${f.a.telemetryKey}`,
        },
      ),
    ),
  );
  receiver = await createReceiver();
  await stack.startDispatcher({ resolveDns, retryTimeScale: 0.0001 });
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${stack.platform.server!.port}`;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.platform.stop().catch(() => {});
  receiver?.close();
  await stack?.stop();
});

/** A read straight to the platform app (not through fetch: msw, the webhook receiver, answers those). */
const apiRequest = (authorization: string) =>
  stack.platform.handle(
    new Request(`${base}/api/v1/telemetry/otel/sessions/filtered`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ serviceName: "support-bot", limit: 1 }),
    }),
  );

async function signIn(email: string, password = PASSWORD) {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Every form control has a name a screen reader reads (its label or aria-label). */
async function unlabelledControls(): Promise<string[]> {
  return page.$$eval("input, select, textarea, button", (els) =>
    els
      .filter((el) => {
        const e = el as HTMLInputElement;
        if (e.type === "hidden") return false;
        const named =
          (e.labels && e.labels.length > 0) ||
          e.getAttribute("aria-label") ||
          (el.tagName === "BUTTON" && el.textContent!.trim());
        return !named;
      })
      .map((el) => el.outerHTML.slice(0, 80)),
  );
}

test("sign in: a wrong password is refused on the page, the right one opens the sessions list (keyboard only)", async () => {
  await page.goto(`${base}/`);
  await page.getByRole("heading", { name: "Sign in to Cellar" }).waitFor();
  await shot("01-sign-in");
  await signIn("owner@example.com", "not my password");
  expect(await page.getByRole("alert").textContent()).toBe("wrong email or password");
  // Keyboard only: focus starts in the email field (autofocus), Tab moves on, Enter submits.
  await page.getByLabel("Email").fill("");
  await page.getByLabel("Email").focus();
  await page.keyboard.type("owner@example.com");
  await page.keyboard.press("Tab");
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press("Enter");
  // The overview is the home page (issue 25); the sessions list is one click away.
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  expect(new URL(page.url()).pathname).toBe("/overview");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sessions" }).click();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
});

test("the sessions list pages over the filtered search, sorts and filters", async () => {
  const rows = page.locator("table.list tbody tr");
  await page.getByLabel("Service").selectOption("support-bot");
  await page.getByRole("status").filter({ hasText: "of 62" }).waitFor();
  expect(await rows.count()).toBe(50);
  expect(await page.getByRole("status").filter({ hasText: "of 62" }).textContent()).toBe("1–50 of 62");
  expect(await unlabelledControls()).toEqual([]);
  await shot("02-sessions");
  const firstPage = await rows.locator("td:first-child").allTextContents();
  // Next follows the API's nextCursor (no depth limit), kept in the URL so a reload keeps the page.
  await page.getByRole("button", { name: "Next page" }).click();
  await page.getByText("51–62 of 62").waitFor();
  expect(new URL(page.url()).searchParams.get("cursor")).toBeTruthy();
  expect(await rows.count()).toBe(12);
  const secondPage = await rows.locator("td:first-child").allTextContents();
  expect(new Set([...firstPage, ...secondPage]).size).toBe(62);
  expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
  await page.reload();
  await page.getByText("51–62 of 62").waitFor();
  expect(await rows.locator("td:first-child").allTextContents()).toEqual(secondPage);
  await page.getByRole("button", { name: "Previous page" }).click();
  await page.getByText("1–50 of 62").waitFor();
  expect(await rows.locator("td:first-child").allTextContents()).toEqual(firstPage);
  // Oldest first, then a filter: the environment none of the sessions has.
  await page.getByLabel("Order").selectOption("asc");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.waitForURL(/dir=asc/);
  await page.locator("table.list tbody tr td").first().filter({ hasText: "conv-1" }).waitFor();
  await page.getByLabel("Environment").fill("nowhere");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.getByText("No sessions match these filters.").waitFor();
  await page.getByLabel("Environment").fill("");
  // Has problems: only sessions whose analysis found one (conv-1's error event), none of the bulk ones.
  await page.getByLabel("Has problems").check();
  await page.getByRole("button", { name: "Apply" }).click();
  await page.waitForURL(/problems=1/);
  await page.getByText(/^1–\d of \d$/).waitFor();
  const withProblems = await rows.locator("td:first-child").allTextContents();
  expect(withProblems).toContain("conv-1");
  expect(withProblems.some((id) => id.startsWith("bulk-"))).toBe(false);
  await page.getByLabel("Has problems").uncheck();
  await page.getByRole("button", { name: "Apply" }).click();
  await page.locator("table.list tbody tr td").first().filter({ hasText: "conv-1" }).waitFor();
});

test("a session (reached by keyboard): the transcript reads as a conversation, a tool result expands, lean content loads in full", async () => {
  // By keyboard: the skip link comes first, then Tab through the filters to the first row's link.
  await page.reload();
  await page.locator("table.list tbody tr td").first().filter({ hasText: "conv-1" }).waitFor();
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
  let tabs = 0;
  while (tabs++ < 40 && (await page.evaluate(() => document.activeElement?.textContent)) !== "conv-1")
    await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("conv-1");
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Session conv-1" }).waitFor();
  const transcript = page.getByRole("list", { name: "Transcript" });
  await transcript.getByText("Why was I charged twice for invoice 42?").waitFor();
  expect(await transcript.getByText("You were charged once; the second charge is a pending refund.").isVisible()).toBe(
    true,
  );
  expect(await page.locator(".badge-complete").first().textContent()).toBe("Complete");
  // The tool result is collapsed until opened.
  const result = page.locator("li.tool_result");
  expect(await result.getByText("Invoice 42: charged once, refund pending").isVisible()).toBe(false);
  await result.locator("summary").click();
  expect(await result.getByText("Invoice 42: charged once, refund pending").isVisible()).toBe(true);
  // The tool call's arguments are lean (first 500 characters) until asked for in full.
  const call = page.locator("li.tool_call");
  await call.locator("summary").press("Enter"); // keyboard opens <details> too
  const before = (await call.locator("pre").textContent())!;
  await call.getByRole("button", { name: /Show full content/ }).click();
  await call.getByRole("button", { name: /Show full content/ }).waitFor({ state: "detached" });
  const after = (await call.locator("pre").textContent())!;
  expect(after.length).toBeGreaterThan(before.length);
  expect(after).toContain("x".repeat(800));
  // Events sit inline, in time order; TL;DR, metrics, cost by model and findings are beside it.
  await transcript.getByText("payment.failed").waitFor();
  expect(await page.getByRole("heading", { name: "TL;DR" }).isVisible()).toBe(true);
  expect(await page.locator("section[aria-labelledby=cost-h]").getByText("gpt-4o-mini").isVisible()).toBe(true);
  expect(await page.getByText("Customer reports double charge").count()).toBeGreaterThanOrEqual(0);
  await shot("03-session");
});

test("a session still processing says so and refreshes itself to complete", async () => {
  // A processor with a long window holds the new session open; a second one with a 1 s window
  // and a fast sweep then matures it while the page is open.
  await stack.processor!.stop();
  const slow = await stack.startProcessor({ windowSeconds: 60 });
  await stack.ingestRequest(
    "/raw/traces",
    chatTrace({
      sessionId: "fresh-1",
      messages: [{ role: "user", content: "Is my order late?" }],
      reply: "It arrives tomorrow.",
    }),
    {
      authorization: `Bearer ${f.a.telemetryKey}`,
    },
  );
  await waitFor(
    async () => (await stack.database.sql`select 1 from sessions where session_id = 'fresh-1'`).length > 0,
    { what: "the fresh session row" },
  );
  await page.goto(`${base}/sessions/support-bot/fresh-1`);
  await page.locator(".badge-processing", { hasText: "Processing" }).waitFor();
  expect(
    await page.getByText("This session has not been analysed yet; this page refreshes by itself.").isVisible(),
  ).toBe(true);
  await slow.stop();
  await stack.startProcessor({ windowSeconds: 1, sweepIntervalMs: 300, sweepGraceSeconds: 0 });
  await page.locator(".badge-complete", { hasText: "Complete" }).waitFor({ timeout: 20_000 });
  await page.getByRole("list", { name: "Transcript" }).getByText("It arrives tomorrow.").waitFor();
  await page.goBack();
});

test("a finding links to its trace: span tree and timing", async () => {
  await page
    .locator("section[aria-labelledby=findings-h]")
    .getByRole("link", { name: /open (span|trace)/ })
    .first()
    .click();
  await page.getByRole("heading", { name: /^Trace / }).waitFor();
  const spans = page.getByRole("list", { name: "Span tree" }).locator("li.span");
  await spans.first().waitFor();
  expect(await spans.count()).toBeGreaterThanOrEqual(1);
  expect(await page.locator(".span-bar span").count()).toBe(await spans.count());
  await shot("04-trace");
});

test("issues: counts, first and last seen, drill-down to affected sessions", async () => {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Issues" }).click();
  await page.getByRole("link", { name: "Customer reports double charge" }).click();
  await page.getByRole("heading", { name: "Customer reports double charge" }).waitFor();
  await page.getByRole("heading", { name: "Affected sessions" }).waitFor();
  expect(await page.locator("section[aria-labelledby=top-h]").getByRole("link", { name: "conv-2" }).isVisible()).toBe(
    true,
  );
  await shot("05-issue");
});

test("webhooks: create (secret shown once), send a test, see the delivery in the log, retry it", async () => {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click();
  await page.getByRole("heading", { name: "Webhooks" }).waitFor();
  await page.getByLabel("Service").selectOption({ label: "support-bot" });
  await page.getByLabel("Name").fill("Ops hook");
  await page.getByLabel("URL (https)").fill("https://hooks.example.test/cellar");
  expect(await unlabelledControls()).toEqual([]);
  await page.getByRole("button", { name: "Create subscription" }).click();
  const secret = await page.getByTestId("secret").textContent();
  expect(secret).toStartWith("whsec_");
  await page.getByRole("link", { name: "Ops hook" }).waitFor();
  await shot("06-webhooks");
  await page.getByRole("button", { name: "I have saved it" }).click();
  expect(await page.getByTestId("secret").count()).toBe(0);
  await page.getByRole("link", { name: "Ops hook" }).click();
  await page.getByRole("heading", { name: "Ops hook" }).waitFor();
  await page.getByRole("button", { name: "Send test event" }).click();
  const log = page.getByRole("table", { name: "Delivery attempts, newest first" });
  const delivered = log.locator("tr", { hasText: "delivered" });
  await delivered.first().waitFor();
  expect(await delivered.first().textContent()).toContain("204");
  expect(receiver.hits("/cellar").length).toBe(1);
  await page
    .getByRole("button", { name: /^Retry delivery / })
    .first()
    .click();
  await page.getByText("Retry queued.").waitFor();
  await waitFor(async () => receiver.hits("/cellar").length === 2, { what: "the retried delivery" });
  await log.locator("tr", { hasText: "delivered" }).nth(1).waitFor();
  const deliveryIds = await log
    .locator("tbody tr")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-delivery")));
  expect(deliveryIds.length).toBe(2);
  expect(deliveryIds[0]).toBe(deliveryIds[1]);
  await shot("07-webhook-log");
  // Edit, disable and enable, rotate: each answered by the API and shown.
  await page.getByLabel("Name").fill("Ops hook (renamed)");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByRole("heading", { name: "Ops hook (renamed)" }).waitFor();
  await page.getByRole("button", { name: "Disable" }).click();
  await page.getByRole("button", { name: "Enable" }).waitFor();
  expect(await page.locator(".actions .badge").textContent()).toBe("disabled");
  await page.getByRole("button", { name: "Enable" }).click();
  await page.getByRole("button", { name: "Disable" }).waitFor();
  await page.getByRole("button", { name: "Rotate secret" }).click();
  const rotated = await page.getByTestId("secret").textContent();
  expect(rotated).toStartWith("whsec_");
  expect(rotated).not.toBe(secret);
});

test("settings: a platform key is shown once, works with Token, and is revoked", async () => {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
  await page.getByRole("button", { name: "Create a platform key" }).click();
  const key = (await page.getByTestId("new-key").textContent())!;
  expect(key).toStartWith("cel_pk_");
  const read = () => apiRequest(`Token ${key}`);
  expect((await read()).status).toBe(200);
  await shot("08-settings");
  await page.getByRole("button", { name: "I have saved it" }).click();
  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: `Revoke key ${key.slice(0, 11)}` }).click();
  await page.getByRole("button", { name: `Revoke key ${key.slice(0, 11)}` }).waitFor({ state: "detached" });
  await waitFor(async () => (await read()).status === 401, { what: "the revoked key to stop working" });
});

test("sign out: back to the sign-in page, and the old token is refused by the API", async () => {
  const token = await page.evaluate(() => localStorage.getItem("cellar.dashboard.token"));
  expect(token).toStartWith("cel_ds_");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in to Cellar" }).waitFor();
  expect(await page.evaluate(() => localStorage.getItem("cellar.dashboard.token"))).toBeNull();
  const r = await apiRequest(`Bearer ${token}`);
  expect(r.status).toBe(401);
  expect(await r.json()).toEqual({ error: "unauthorized" });
});

test("a viewer has no webhooks page: no link, and opening it directly says why", async () => {
  await signIn("viewer@acme.test");
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).count()).toBe(0);
  await page.goto(`${base}/webhooks`);
  await page.getByRole("heading", { name: "Not available for your role" }).waitFor();
  expect(await page.getByRole("alert").textContent()).toContain("admin or owner");
  await shot("09-viewer-webhooks");
});

test("a user who can see no service yet gets the curl for a first trace", async () => {
  await page.getByRole("button", { name: "Sign out" }).click();
  const u = await createUser(stack.database.db, {
    tenantId: f.a.tenantId,
    email: "newcomer@acme.test",
    role: "member",
  });
  await setPassword(stack.database.db, { userId: u.id, password: PASSWORD });
  await signIn("newcomer@acme.test");
  await page.getByRole("heading", { name: "Send your first trace" }).waitFor();
  expect(await page.locator("pre.code").textContent()).toContain("curl -s -X POST $INGEST/raw/traces");
  await shot("12-empty-state");
});

test("an expired sign-in sends the user back to the sign-in page with a message", async () => {
  await stack.database.sql`update dashboard_sessions set expires_at = now() - interval '1 second'`;
  await page.goto(`${base}/sessions`);
  await page.getByRole("heading", { name: "Sign in to Cellar" }).waitFor();
  expect(await page.getByText("Your session has ended. Sign in again.").isVisible()).toBe(true);
});

test("readable at 390 px: no sideways scrolling on the sessions list and a session", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn("owner@example.com");
  await page.getByText(/^1–50 of 6\d$/).waitFor(); // 62, and fresh-1 from the processing test
  const overflow = () =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(await overflow()).toBeLessThanOrEqual(0);
  await shot("10-sessions-390");
  await page.goto(`${base}/sessions/support-bot/conv-1`);
  await page.getByRole("list", { name: "Transcript" }).getByText("Why was I charged twice for invoice 42?").waitFor();
  expect(await overflow()).toBeLessThanOrEqual(0);
  await shot("11-session-390");
});
