// "Show more" pressed in real headless Chromium: a session longer than one page of its transcript
// (500 items, web/src/pages/Session.tsx) and of its cost breakdown (100 calls a page, by cursor).
// 260 calls sent through the batch door and matured by the processor on NATS and Postgres; the
// page shows the first 500 items and 100 calls, and each press appends the next page in order
// until the button goes (useMore, web/src/components/useMore.ts), the rows as the platform's
// reads give them, none twice.
// Screenshots: test-output/dashboard-more/ (or $TEST_OUTPUT_DIR/dashboard-more/).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { type launchChromium, launchBeside, signInOnPage, stopDashboardTest, testOutputDir } from "./helpers/browser";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const PASSWORD = "correct horse battery staple";
const EMAIL = "more@example.com";
const SERVICE = "long-bot";
const SESSION = "long-talk";
/** Calls in the session: 2 transcript items each, so 520 items (a page of 500 and 20 more). */
const CALLS = 260;
let stack: TestStack;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let base: string;
const shots = testOutputDir("dashboard-more");

const T0 = Date.now() - 3_600_000;
const call = (i: number) =>
  chatTrace({
    serviceName: SERVICE,
    sessionId: SESSION,
    start: new Date(T0 + i * 1000),
    messages: [{ role: "user", content: `question ${i}` }],
    reply: `answer ${i}`,
  });

beforeAll(async () => {
  ({ browser, page, stack } = await launchBeside(() => createTestStack({ windowSeconds: 1 })));
  const t = await bootstrapTenant(stack.database.db, { name: "more", email: EMAIL });
  await setPassword(stack.database.db, { userId: t.ownerId, password: PASSWORD });
  for (let from = 0; from < CALLS; from += 130) {
    const items = Array.from({ length: 130 }, (_, k) => ({ type: "trace", body: call(from + k) }));
    const r = await stack.ingestRequest("/raw/batch", { items }, { authorization: `Bearer ${t.telemetryKey}` });
    expect([r.status, await r.text()]).toEqual([200, expect.any(String)]);
  }
  await waitFor(
    async () => {
      const r = await stack.platformRequest(`/telemetry/metrics/session/${SERVICE}/${SESSION}`, {
        token: t.platformKey,
      });
      const body: any = r.status === 200 ? await r.json() : null;
      return body?.status === "complete" && body.metrics?.modelCalls === CALLS;
    },
    { what: `the ${CALLS}-call session matured`, timeoutMs: 60_000 },
  );
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${stack.platform.server!.port}`;
}, 120_000);

afterAll(() => stopDashboardTest(browser, stack));

test("signs in", () => signInOnPage(page, base, EMAIL, PASSWORD));

test("the transcript's Show more appends the items after the first page, in order, then goes", async () => {
  await page.goto(`${base}/sessions/${SERVICE}/${SESSION}`);
  const items = page.getByRole("list", { name: "Transcript" }).locator(":scope > li");
  await items.first().waitFor();
  expect(await items.count()).toBe(500);
  const more = page.getByRole("button", { name: "Show more (20 more items)" });
  await more.click();
  await waitFor(async () => (await items.count()) === 520, { what: "520 items shown", timeoutMs: 10_000 });
  expect(await more.count()).toBe(0);
  // Question then answer, call after call: nothing lost, nothing twice, nothing out of order
  // (text content: items off screen are not laid out, `content-visibility: auto`).
  const texts = (await items.allTextContents()).map((s) => s.match(/(question|answer) \d+/)?.[0]);
  expect(texts).toEqual(Array.from({ length: CALLS }, (_, i) => [`question ${i}`, `answer ${i}`]).flat());
  await page.screenshot({ path: join(shots, "transcript.png") });
});

test("the cost breakdown's Show the next calls appends 100 calls a press until the last", async () => {
  const panel = page.getByRole("region", { name: "Cost breakdown" });
  await panel.waitFor();
  const summaries = panel.locator("details.cost-call > summary");
  const next = panel.getByRole("button", { name: "Show the next calls" });
  for (const shown of [100, 200]) {
    await waitFor(async () => (await summaries.count()) === shown, { what: `${shown} calls`, timeoutMs: 10_000 });
    await next.click();
  }
  await waitFor(async () => (await summaries.count()) === CALLS, { what: `${CALLS} calls`, timeoutMs: 10_000 });
  expect(await next.count()).toBe(0);
  const numbers = (await summaries.allInnerTexts()).map((s) => Number(s.match(/^Call (\d+):/)?.[1]));
  expect(numbers).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1));
  await page.screenshot({ path: join(shots, "costs.png"), fullPage: true });
});
