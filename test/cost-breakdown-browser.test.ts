// The session page's cost breakdown in real headless Chromium (issue 40): every call of a session
// with its lines (a Claude call with 1-hour cache writes over 200k prompt tokens, Gemini audio
// input, an OpenAI flex-tier call, Bedrock through an `eu.` profile, the last over OTLP), and the
// session's total shown as the sum of those lines, equal to the cost the session's metrics
// computed at maturation. The trace page shows the same component for its one call. The platform
// listens on a port; the processor matures the session on NATS and Postgres.
// Screenshots: test-output/cost-breakdown/ (or $TEST_OUTPUT_DIR/cost-breakdown/).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { type launchChromium, launchBeside, signInOnPage, stopDashboardTest, testOutputDir } from "./helpers/browser";
import { otlpChat } from "./helpers/otlp-chat";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

const PASSWORD = "correct horse battery staple";
const EMAIL = "costs@example.com";
const SERVICE = "priced-bot";
const SESSION = "four-rates";
let stack: TestStack;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let base: string;
let platformKey: string;
const shots = testOutputDir("cost-breakdown");

const T0 = Date.now() - 60_000;
function raw(i: number, model: string, usage: Record<string, unknown>, tier?: string) {
  return {
    provider: "openai",
    service_name: SERVICE,
    session_id: SESSION,
    trace_id: `call-${i}`,
    request: { model, messages: [{ role: "user", content: `question ${i}` }], ...(tier ? { service_tier: tier } : {}) },
    responses: [
      {
        id: `resp-${i}`,
        object: "chat.completion",
        model,
        ...(tier ? { service_tier: tier } : {}),
        choices: [{ index: 0, message: { role: "assistant", content: `answer ${i}` }, finish_reason: "stop" }],
        usage,
      },
    ],
    start_time: new Date(T0 + i * 2000).toISOString(),
    end_time: new Date(T0 + i * 2000 + 800).toISOString(),
  };
}

beforeAll(async () => {
  ({ browser, page, stack } = await launchBeside(() => createTestStack({ windowSeconds: 1 })));
  const t = await bootstrapTenant(stack.database.db, { name: "costs", email: EMAIL });
  platformKey = t.platformKey;
  await setPassword(stack.database.db, { userId: t.ownerId, password: PASSWORD });
  const auth = { authorization: `Bearer ${t.telemetryKey}` };
  const bodies: Array<[string, unknown]> = [
    [
      "/raw/traces",
      raw(0, "claude-sonnet-4-5-20250929", {
        prompt_tokens: 300_000,
        completion_tokens: 1_000,
        total_tokens: 301_000,
        prompt_tokens_details: {
          cached_tokens: 20_000,
          cache_creation_tokens: 250_000,
          cache_creation_1h_tokens: 200_000,
        },
      }),
    ],
    [
      "/raw/traces",
      raw(1, "gemini-2.5-flash", {
        prompt_tokens: 2_000,
        completion_tokens: 100,
        total_tokens: 2_100,
        prompt_tokens_details: { audio_tokens: 1_500 },
      }),
    ],
    ["/raw/traces", raw(2, "gpt-5", { prompt_tokens: 2_000, completion_tokens: 100, total_tokens: 2_100 }, "flex")],
    [
      "/v1/traces",
      otlpChat({
        service: SERVICE,
        traceId: "56".repeat(16),
        spanId: "0000000000000004",
        provider: "aws.bedrock",
        model: "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        session: SESSION,
        startMs: T0 + 6000,
        attributes: { "gen_ai.usage.input_tokens": 1_000, "gen_ai.usage.output_tokens": 100 },
      }),
    ],
  ];
  for (const [path, body] of bodies) {
    const r = await stack.ingestRequest(path, body, auth);
    expect([r.status, await r.text()]).toEqual([200, expect.any(String)]);
  }
  await waitFor(
    async () => {
      const r = await stack.platformRequest(`/telemetry/metrics/session/${SERVICE}/${SESSION}`, { token: platformKey });
      const body: any = r.status === 200 ? await r.json() : null;
      return body?.status === "complete" && body.metrics?.modelCalls === 4;
    },
    { what: "the four-call session matured", timeoutMs: 30_000 },
  );
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${stack.platform.server!.port}`;
}, 90_000);

afterAll(() => stopDashboardTest(browser, stack));

test("signs in", () => signInOnPage(page, base, EMAIL, PASSWORD));

test("the session page lists every call's lines, and its total is the sum of them all", async () => {
  // What the platform says, to compare the page with.
  const r = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/${SESSION}/cost-breakdown`, {
    token: platformKey,
  });
  const api: any = await r.json();
  const lines = api.traces.flatMap((t: any) => t.cost.calls.flatMap((c: any) => c.lines));
  const sum = Math.round(lines.reduce((n: number, l: any) => n + l.usd, 0) * 1e10) / 1e10;
  expect(lines).toHaveLength(12);
  expect(sum).toBeCloseTo(2.9981, 10); // 2.9895 + 0.0019 + 0.00175 + 0.00495

  await page.goto(`${base}/sessions/${SERVICE}/${SESSION}`);
  const panel = page.getByRole("region", { name: "Cost breakdown" });
  await panel.waitFor();
  const total = panel.getByTestId("cost-total");
  expect(await total.innerText()).toBe("Total: $2.9981 (sum of 12 lines over 4 calls)");
  // The same figure as the session's metrics (computed at maturation) and its cost by model.
  const metricCost = page.locator("dl.metrics div", { hasText: "Cost" }).locator("dd");
  expect(await metricCost.innerText()).toBe("$2.9981");
  expect(await page.getByRole("region", { name: "Cost by model" }).locator("tfoot td").innerText()).toBe("$2.9981");

  // Four calls: each summary names its model and cost; collapsed, each opens to its lines.
  const summaries = panel.locator("details.cost-call > summary");
  expect(await summaries.allInnerTexts()).toEqual([
    "Call 1: claude-sonnet-4-5-20250929 · $2.9895",
    "Call 2: gemini-2.5-flash · $0.0019",
    "Call 3: gpt-5 · $0.0018",
    "Call 4: eu.anthropic.claude-sonnet-4-5-20250929-v1:0 · $0.005",
  ]);
  for (const s of await summaries.all()) await s.click();
  const rows = async (name: string) =>
    (await panel.getByRole("table", { name }).locator("tbody tr").allInnerTexts()).map((t) => t.split("\t"));
  expect(await rows("Lines of Call 1")).toEqual([
    ["input", "30,000", "$6", "prompt > 200000 tokens", "$0.1800"],
    ["cache read", "20,000", "$0.6", "prompt > 200000 tokens", "$0.0120"],
    ["cache write", "50,000", "$7.5", "prompt > 200000 tokens", "$0.3750"],
    ["cache write 1 h", "200,000", "$12", "prompt > 200000 tokens", "$2.4000"],
    ["output", "1,000", "$22.5", "prompt > 200000 tokens", "$0.0225"],
  ]);
  expect(await rows("Lines of Call 2")).toEqual([
    ["input", "500", "$0.3", "base", "$0.00015"],
    ["input audio", "1,500", "$1", "base", "$0.0015"],
    ["output", "100", "$2.5", "base", "$0.00025"],
  ]);
  expect(await panel.getByText("tier flex (x0.5)").count()).toBe(1);
  expect(await rows("Lines of Call 3")).toEqual([
    ["input", "2,000", "$0.625", "base", "$0.0013"],
    ["output", "100", "$5", "base", "$0.0005"],
  ]);
  expect(await rows("Lines of Call 4")).toEqual([
    ["input", "1,000", "$3.3", "base", "$0.0033"],
    ["output", "100", "$16.5", "base", "$0.0017"],
  ]);
  await page.screenshot({ path: join(shots, "session.png"), fullPage: true });

  // A call's link opens its trace, whose page shows the same breakdown for its one call.
  await panel.getByRole("link", { name: "Call 1" }).click();
  const tracePanel = page.getByRole("region", { name: "Cost breakdown" });
  await page.getByRole("heading", { name: "Trace call-0" }).waitFor();
  expect(await tracePanel.getByTestId("cost-total").innerText()).toBe("Total: $2.9895 (sum of 5 lines over 1 call)");
  expect(await tracePanel.locator("details.cost-call[open]").count()).toBe(1);
  await page.screenshot({ path: join(shots, "trace.png"), fullPage: true });
});
