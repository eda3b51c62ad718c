// The evaluators and review queue pages in headless Chromium against the real apps (platform over
// HTTP, processor, dispatcher, NATS, Postgres) and a fake judge: an evaluator created from the
// form judges settled sessions; the queue shows the judge's score and reason beside the
// transcript; a verdict takes the session off the queue and shows as agreement on the evaluators page.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { launchChromium, testOutputDir } from "./helpers/browser";
import { startFakeJudge } from "./helpers/fake-judge";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const PASSWORD = "correct horse battery staple";
const SERVICE = "support-bot";
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let judge: Awaited<ReturnType<typeof startFakeJudge>>;
let page: Page;
let base: string;
const shots = testOutputDir("evaluations");

const send = async (sessionId: string, reply: string) => {
  const trace = chatTrace({
    sessionId,
    serviceName: SERVICE,
    messages: [{ role: "user", content: `question ${sessionId}` }],
    reply,
  });
  const res = await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${tenant.telemetryKey}` });
  expect(res.status).toBe(200);
};

beforeAll(async () => {
  [browser, stack, judge] = await Promise.all([
    launchChromium(),
    createTestStack({ windowSeconds: 1, webhooks: { insecureAllowlist: "127.0.0.0/8" } }),
    startFakeJudge(),
  ]);
  await stack.startDispatcher({ insecureAllowlist: "127.0.0.0/8", evaluations: { cacheMs: 50 } });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
  await setPassword(stack.database.db, { userId: tenant.ownerId, password: PASSWORD });
  await send("warm-up", "hello");
  // Settled before the evaluator exists, so only the session sent after it is judged.
  await waitFor(
    async () =>
      (await stack.database.sql`select 1 from sessions where session_id = 'warm-up' and published_count >= 1`).length >
      0,
    { timeoutMs: 30_000, what: "warm-up matured" },
  );
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${stack.platform.server!.port}`;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.platform.stop().catch(() => {});
  await stack?.stop();
  judge?.stop();
});

test("create a judge from the form, review what it scored low beside the transcript, see the agreement", async () => {
  await page.goto(`${base}/`);
  await page.getByLabel("Email").fill("owner@example.com");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "Evaluators" }).click();
  await page.getByRole("heading", { name: "Evaluators" }).waitFor();
  await page.getByLabel("Name (its scores' name)").fill("helpfulness");
  await page.getByLabel("Kind").selectOption("openai");
  await page.getByLabel("Endpoint URL").fill(judge.openaiUrl);
  await page.getByLabel("Model").fill("score:0.2");
  await page.getByLabel("Review below (optional)").fill("0.5");
  await page.getByRole("button", { name: "Create evaluator" }).click();
  await page.getByRole("cell", { name: "openai score:0.2" }).waitFor();
  await page.screenshot({ path: join(shots, "01-evaluators.png"), fullPage: true });

  await Bun.sleep(100);
  await send("needs-review", "Try turning it off and on again.");
  await waitFor(
    async () => (await stack.database.sql`select 1 from evaluations where entity_id = 'needs-review'`).length > 0,
    {
      timeoutMs: 30_000,
      what: "judged",
    },
  );

  await page.getByRole("link", { name: "Review queue" }).click();
  await page.getByRole("heading", { name: "Review queue" }).waitFor();
  const review = page.getByRole("form", { name: "Review of helpfulness" });
  await review.waitFor();
  expect(await review.getByTestId("judge-score").textContent()).toBe("0.2");
  expect(await review.getByTestId("judge-reason").textContent()).toBe("judged by the fake judge");
  // The transcript is beside it.
  await page.getByText("Try turning it off and on again.").first().waitFor();
  await page.screenshot({ path: join(shots, "02-review.png"), fullPage: true });
  await review.getByLabel("Your verdict").fill("0.9");
  await review.getByLabel("Comment").fill("it did help");
  await review.getByRole("button", { name: "Submit verdict" }).click();
  await page.getByText("Nothing to review.").waitFor();
  const [verdict] = await stack.database
    .sql`select source, value, comment from scores where session_id = 'needs-review' and source = 'reviewer'`;
  expect(verdict).toEqual({ source: "reviewer", value: 0.9, comment: "it did help" });

  await page.getByRole("link", { name: "Evaluators" }).click();
  await page.getByText("mean |difference| 0.7 (1 reviewed)").waitFor();
  await page.screenshot({ path: join(shots, "03-agreement.png"), fullPage: true });
}, 120_000);
