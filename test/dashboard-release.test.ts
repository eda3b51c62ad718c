// The dashboard's rough edges of issue 37, in real headless Chromium against the real apps:
// a revoked key shows as revoked without a reload (the DELETE answers 204 with no body), the
// overview's rate axis stays within 0-100% and its count axes tick on integers, small costs keep
// their digits, tables stay readable at 390 px (rows stacked, no word broken, buttons in view), a
// long session id is not a column five characters wide, and a long email does not wrap the header
// at 1,280 px. Screenshots: test-output/dashboard-release/ at 1,280 and 390 px.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { createUser } from "@cellar/shared/admin/tenancy";
import { launchChromium, testOutputDir } from "./helpers/browser";
import { chatTrace } from "./helpers/payloads";
import { seedPlatform, type PlatformFixture, unsettledSessions } from "./helpers/platform";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const PASSWORD = "correct horse battery staple";
const EMAIL = "firstname.middlename.lastname.on-call-team@customer-success.acme-corporation.test";
const LONG_SESSION = `conversation-2026-11-28T04-31-30-user-4242-${crypto.randomUUID()}-${crypto.randomUUID()}`;
const CHEAP = "cheap-call-session";
let stack: TestStack;
let f: PlatformFixture;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let base: string;
const shots = testOutputDir("dashboard-release");
const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
const widths = [1280, 390] as const;

beforeAll(async () => {
  const [launched] = await Promise.all([
    launchChromium(),
    (async () => {
      stack = await createTestStack({ windowSeconds: 1 });
      f = await seedPlatform(stack);
    })(),
  ]);
  browser = launched;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  page.on("dialog", (d) => d.accept());
  const user = await createUser(stack.database.db, { tenantId: f.a.tenantId, email: EMAIL, role: "admin" });
  await setPassword(stack.database.db, { userId: user.id, password: PASSWORD });
  // A session with a long id and one of a single cheap call (5 + 2 tokens of gpt-4o-mini: $0.0000020).
  for (const [sessionId, usage] of [
    [LONG_SESSION, undefined],
    [CHEAP, { prompt_tokens: 5, completion_tokens: 2 }],
  ] as const) {
    const r = await stack.ingestRequest(
      "/raw/traces",
      chatTrace({ sessionId, messages: [{ role: "user", content: "hi" }], reply: "hello", usage }),
      { authorization: `Bearer ${f.a.telemetryKey}` },
    );
    expect(r.status).toBe(200);
  }
  // Both sessions must exist first: an accepted trace reaches the sessions table a moment after
  // ingest answers, and until then "nothing unsettled" is true of a table without them.
  await waitFor(
    async () =>
      (await stack.database.sql`select 1 from sessions where session_id in (${LONG_SESSION}, ${CHEAP})`).length === 2 &&
      (await unsettledSessions(stack)) === 0,
    {
      what: "both new sessions matured",
      timeoutMs: 60_000,
    },
  );
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${stack.platform.server!.port}`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.platform.stop().catch(() => {});
  await stack?.stop();
});

/** Words of table cells (up to 24 characters) that the layout broke across two lines. */
function brokenWords(): Promise<string[]> {
  return page.evaluate(() => {
    const broken: string[] = [];
    const walker = document.createTreeWalker(document.querySelector("main")!, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el?.closest("table.list td") || !el.checkVisibility()) continue; // not shown (a closed <details>)
      const text = n.textContent ?? "";
      for (const m of text.matchAll(/\S+/g)) {
        if (m[0].length < 2 || m[0].length > 24) continue; // a longer token may break (at hyphens, or anywhere)
        const range = document.createRange();
        range.setStart(n, m.index!);
        range.setEnd(n, m.index! + m[0].length);
        // On two lines: rects more than half a line apart (a fallback glyph's box may sit a pixel off).
        const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
        const tops = rects.map((r) => r.top);
        if (rects.length > 1 && Math.max(...tops) - Math.min(...tops) > rects[0].height * 0.6) broken.push(m[0]);
      }
    }
    return broken;
  });
}

/** Buttons in table rows that are not wholly visible (cut by the viewport or their scroll box). */
function hiddenButtons(): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>("table.list td button"))
      .filter((b) => b.checkVisibility())
      .filter((b) => {
        const r = b.getBoundingClientRect();
        const box = b.closest(".table-wrap")!.getBoundingClientRect();
        return r.left < Math.max(0, box.left) - 0.5 || r.right > Math.min(window.innerWidth, box.right) + 0.5;
      })
      .map((b) => b.getAttribute("aria-label") ?? b.textContent ?? ""),
  );
}

test("a long email does not wrap the header at 1,280 px", async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${base}/sign-in`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await shot("header-long-email-1280");
  const header = await page.locator("header.top").boundingBox();
  const brand = await page.locator("header.top .brand").boundingBox();
  const signOut = await page.getByRole("button", { name: "Sign out" }).boundingBox();
  // One row: the sign-out button on the brand's line, the header one line tall.
  expect(Math.abs(signOut!.y + signOut!.height / 2 - (brand!.y + brand!.height / 2))).toBeLessThan(8);
  expect(header!.height).toBeLessThan(60);
});

test("organization: revoking a key shows it revoked at once (204, no reload); tables readable at 390 px", async () => {
  await page.goto(`${base}/organization`);
  await page.getByText("Every service (telemetry keys)").waitFor();
  const [dsn] = await stack.database.sql<{ id: string }[]>`
    select id from api_keys where kind = 'dsn-server' and tenant_id = ${f.a.tenantId} and revoked_at is null
    order by created_at limit 1`;
  const row = page.locator(`tr[data-key="${dsn.id}"]`);
  await row.getByRole("button", { name: /^Revoke / }).click();
  await row.getByText(/^revoked /).waitFor({ timeout: 10_000 });
  expect(await row.getByRole("button", { name: /^Revoke / }).count()).toBe(0);
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    await page.getByText("Every service (telemetry keys)").waitFor();
    await shot(`organization-${width}`);
    expect(await brokenWords()).toEqual([]);
    expect(await hiddenButtons()).toEqual([]);
    // Captions span their table (a stacked table's caption was one character wide).
    const narrow = await page.$$eval(
      "table.list caption",
      (els) =>
        els.filter(
          (c) =>
            !c.classList.contains("sr-only") &&
            c.checkVisibility() &&
            c.getBoundingClientRect().width < c.closest(".table-wrap")!.clientWidth / 2,
        ).length,
    );
    expect(narrow).toBe(0);
  }
});

test("sessions: a long session id keeps a readable width at 390 px; a cheap session's cost keeps its digits", async () => {
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${base}/sessions?service=support-bot`);
    const link = page.getByRole("link", { name: LONG_SESSION });
    await link.waitFor();
    const box = (await link.boundingBox())!;
    const lineHeight = await link.evaluate((el) => Number.parseFloat(getComputedStyle(el).lineHeight) || 20);
    expect(box.width).toBeGreaterThan(Math.min(250, width * 0.6));
    expect(box.height).toBeLessThanOrEqual(lineHeight * 5);
    const cheap = page.locator("tr", { has: page.getByRole("link", { name: CHEAP, exact: true }) });
    expect(await cheap.locator('td[data-label="Cost"]').textContent()).toMatch(/^\$0\.00000\d/);
    expect(await brokenWords()).toEqual([]);
    await shot(`sessions-${width}`);
    await page.goto(`${base}/sessions/support-bot/${encodeURIComponent(LONG_SESSION)}`);
    await page.getByRole("heading", { name: new RegExp(LONG_SESSION.slice(0, 20)) }).waitFor();
    await shot(`session-long-id-${width}`);
  }
});

test("overview: rates bounded to 0-100% and labelled unclipped, counts on integer ticks", async () => {
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${base}/overview?service=support-bot&window=24h`);
    const rates = page.getByTestId("plot-rates");
    await waitFor(async () => Boolean(await rates.getAttribute("data-y-labels")), { what: "the rates chart drawn" });
    const rateLabels = (await rates.getAttribute("data-y-labels"))!.split("|").filter(Boolean);
    expect(rateLabels.length).toBeGreaterThan(1);
    for (const l of rateLabels) {
      expect(l).toMatch(/^\d+(\.\d)?%$/);
      expect(Number.parseFloat(l)).toBeLessThanOrEqual(100);
    }
    // Wide enough for its longest label (the fixed 72 px clipped "10000.0%").
    const longest = Math.max(...rateLabels.map((l) => l.length));
    expect(Number(await rates.getAttribute("data-y-width"))).toBeGreaterThanOrEqual(longest * 7.2 + 20);
    const traffic = (await page.getByTestId("plot-traffic").getAttribute("data-y-labels"))!.split("|").filter(Boolean);
    expect(traffic.every((l) => /^[\d,]+$/.test(l))).toBe(true);
    expect(new Set(traffic).size).toBe(traffic.length);
    await shot(`overview-${width}`);
  }
  // A service with no session in the window: zero everywhere, the rate axis still 0-5%, not 0-10000%.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${base}/overview?service=support-bot&window=1h`);
  await page.getByTestId("total-sessions").waitFor();
  await shot("overview-zero-1280");
});
