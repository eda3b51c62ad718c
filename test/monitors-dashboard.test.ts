// The monitor and score pages of the dashboard in headless Chromium against the real apps
// (platform over HTTP, processor, NATS, Postgres): a monitor created with a preview of its
// aggregate, its page with the chart and state; a reviewer score added on a session's page.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { launchChromium, testOutputDir } from "./helpers/browser";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const PASSWORD = "correct horse battery staple";
const SERVICE = "support-bot";
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let base: string;
const shots = testOutputDir("monitors");

beforeAll(async () => {
  [browser, stack] = await Promise.all([
    launchChromium(),
    createTestStack({ windowSeconds: 1, startProcessor: false }),
  ]);
  // Definitions read fresh on every evaluation (production caches them 5 s).
  await stack.startProcessor({ monitors: { definitionsCacheMs: 1 } });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
  await setPassword(stack.database.db, { userId: tenant.ownerId, password: PASSWORD });
  for (let i = 0; i < 3; i++) {
    const trace = chatTrace({
      sessionId: `dash-${i}`,
      serviceName: SERVICE,
      messages: [{ role: "user", content: `q${i}` }],
      reply: "a",
      durationMs: 1000 * (i + 1),
    });
    const res = await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${tenant.telemetryKey}` });
    expect(res.status).toBe(200);
  }
  await waitFor(
    async () =>
      (await stack.database.sql`select 1 from sessions where status = 'matured' and published_count = 1`).length === 3,
    { what: "three matured sessions", timeoutMs: 30_000 },
  );
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${stack.platform.server!.port}`;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.platform.stop().catch(() => {});
  await stack?.stop();
});

test("create a monitor with a preview of the last window, then its page shows state and chart", async () => {
  await page.goto(`${base}/`);
  await page.getByLabel("Email").fill("owner@example.com");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "Monitors" }).click();
  await page.getByRole("heading", { name: "Monitors" }).waitFor();
  await page.getByLabel("Name").fill("slow answers");
  await page.getByLabel("Metric").selectOption("latency_p95");
  await page.getByLabel("Window (minutes)").fill("60");
  await page.getByLabel("Threshold", { exact: true }).fill("2500");
  await page.getByRole("button", { name: "Preview" }).click();
  const preview = page.getByTestId("preview");
  await preview.waitFor();
  // p95 of 1000, 2000, 3000 ms (percentile_cont) = 2900: over 2500.
  expect(await preview.textContent()).toContain("2900 over 3 samples");
  expect(await preview.textContent()).toContain("alert");
  await page.screenshot({ path: join(shots, "01-preview.png"), fullPage: true });
  await page.getByRole("button", { name: "Create monitor" }).click();
  await page.getByRole("heading", { name: "Monitor slow answers" }).waitFor();
  await page.getByRole("heading", { name: "State changes" }).waitFor();
  await page.screenshot({ path: join(shots, "02-monitor.png"), fullPage: true });
  const [row] = await stack.database.sql`select metric, threshold, state from monitors`;
  expect(row).toEqual({ metric: "latency_p95", threshold: 2500, state: "ok" });

  // The next maturation evaluates it: the page shows the alert and its state change.
  const res = await stack.ingestRequest(
    "/raw/traces",
    chatTrace({
      sessionId: "dash-3",
      serviceName: SERVICE,
      messages: [{ role: "user", content: "q" }],
      reply: "a",
      durationMs: 4000,
    }),
    { authorization: `Bearer ${tenant.telemetryKey}` },
  );
  expect(res.status).toBe(200);
  await waitFor(async () => (await stack.database.sql`select 1 from monitors where state = 'alert'`).length === 1, {
    what: "the monitor in alert",
    timeoutMs: 30_000,
  });
  await page.reload();
  await page
    .getByRole("cell", { name: /alert/ })
    .first()
    .waitFor()
    .catch(async (err) => {
      await page.screenshot({ path: join(shots, "failed-reload.png"), fullPage: true });
      throw err;
    });
  expect(await page.locator("svg.chart").count()).toBe(1);
  await page.getByRole("link", { name: "Monitors" }).click();
  await page.getByRole("link", { name: "slow answers" }).waitFor();
  expect(await page.locator("table.list").textContent()).toContain("alert");
  await page.screenshot({ path: join(shots, "03-list.png"), fullPage: true });
}, 120_000);

test("a member adds a reviewer score on a session's page, offered the declared names", async () => {
  const declare = await stack.platformRequest(`/scores/configs/${SERVICE}/quality`, {
    method: "PUT",
    token: tenant.platformKey,
    body: JSON.stringify({ data_type: "categorical", categories: ["good", "bad"] }),
  });
  expect(declare.status).toBe(200);
  await page.goto(`${base}/sessions/${SERVICE}/dash-0`);
  await page.getByRole("heading", { name: "Scores" }).waitFor();
  await page.getByLabel("Name", { exact: true }).fill("quality");
  // The declared names load beside the page's own reads: the value becomes a choice once they have.
  await page.locator("select#score-value").waitFor();
  await page.getByLabel("Value").selectOption("bad");
  await page.getByLabel("Comment").fill("missed the question");
  await page.getByRole("button", { name: "Add score" }).click();
  await page.getByText("missed the question").waitFor();
  await page.screenshot({ path: join(shots, "04-session-score.png"), fullPage: true });
  const [score] = await stack.database.sql`select name, label, source, author_user_id from scores`;
  expect(score).toEqual({ name: "quality", label: "bad", source: "reviewer", author_user_id: tenant.ownerId });
}, 60_000);
