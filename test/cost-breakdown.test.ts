import { afterAll, beforeAll, expect, test } from "bun:test";
import { ANTHROPIC_1H_USAGE } from "@cellar/shared/otlp/test-usage";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { kv, otlpChat } from "./helpers/otlp-chat";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * Issue 40's proof through the platform: each call's cost read back broken down (docs/pricing.md,
 * "Cost breakdown"): Claude 1-hour cache writes over 200k prompt tokens, Gemini audio input, an
 * OpenAI flex-tier call, Bedrock through a regional profile, and an unknown model left unpriced
 * with its reason. The trace's stored cost (at maturation) is the sum of its lines.
 */
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const SERVICE = "costed";

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  tenant = await bootstrapTenant(stack.database.db, { name: "cost-breakdown" });
});
afterAll(() => stack.stop());

const T0 = Date.now() - 60_000;

function otlpCall(
  session: string,
  spanId: string,
  provider: string,
  model: string,
  attributes: Record<string, string | number>,
) {
  return otlpChat({
    service: SERVICE,
    traceId: "34".repeat(16),
    spanId,
    provider,
    model,
    session,
    startMs: T0,
    attributes,
  });
}

function rawCall(session: string, model: string, usage: Record<string, unknown>) {
  return {
    provider: "openai",
    service_name: SERVICE,
    session_id: session,
    request: { model, messages: [{ role: "user", content: "hi" }] },
    responses: [
      {
        id: `resp-${session}`,
        object: "chat.completion",
        model,
        choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
        usage,
      },
    ],
    start_time: new Date(T0).toISOString(),
    end_time: new Date(T0 + 1000).toISOString(),
  };
}

async function send(path: string, body: unknown) {
  const r = await stack.ingestRequest(path, body, { authorization: `Bearer ${tenant.telemetryKey}` });
  expect(r.status).toBe(200);
}

/** The session's one trace, read back once matured. */
async function traceOf(session: string) {
  return waitFor(
    async () => {
      const [row] = await stack.database.sql<
        { trace_id: string }[]
      >`select trace_id from traces where session_id = ${session}`;
      if (!row) return null;
      const r = await stack.platformRequest(`/telemetry/otel/trace/${row.trace_id}?serviceName=${SERVICE}`, {
        token: tenant.platformKey,
      });
      const body: any = r.status === 200 ? await r.json() : null;
      return body?.status === "matured" ? body : null;
    },
    { what: `the matured trace of ${session}`, timeoutMs: 30_000 },
  );
}

const linesOf = (trace: any) => trace.cost.calls[0].lines.map((l: any) => [l.kind, l.tokens, l.usdPerMillion, l.tier]);

test("cost broken down per call, read back through the platform, for the rates issue 40 names", async () => {
  await send(
    "/raw/traces",
    rawCall("claude-1h", "claude-sonnet-4-5-20250929", {
      prompt_tokens: 300_000,
      completion_tokens: 1_000,
      total_tokens: 301_000,
      prompt_tokens_details: {
        cached_tokens: 20_000,
        cache_creation_tokens: 250_000,
        cache_creation_1h_tokens: 200_000,
      },
    }),
  );
  await send(
    "/raw/traces",
    rawCall("gemini-audio", "gemini-2.5-flash", {
      prompt_tokens: 2_000,
      completion_tokens: 100,
      total_tokens: 2_100,
      prompt_tokens_details: { audio_tokens: 1_500 },
    }),
  );
  await send(
    "/v1/traces",
    otlpCall("openai-flex", "0000000000000001", "openai", "gpt-5", {
      "gen_ai.usage.input_tokens": 2_000,
      "gen_ai.usage.output_tokens": 100,
      "openai.response.service_tier": "flex",
    }),
  );
  await send(
    "/v1/traces",
    otlpCall("bedrock-eu", "0000000000000002", "aws.bedrock", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0", {
      "gen_ai.usage.input_tokens": 1_000,
      "gen_ai.usage.output_tokens": 100,
    }),
  );
  await send(
    "/v1/traces",
    otlpCall("unknown-model", "0000000000000003", "openai", "acme-unknown-9", {
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 10,
    }),
  );

  const claude = await traceOf("claude-1h");
  expect(claude.cost.calls[0].entry).toMatchObject({ id: "anthropic/claude-sonnet-4-5", date: "2026-09-23" });
  expect(claude.cost.calls[0].entry.source).toContain("@pydantic/genai-prices@");
  expect(linesOf(claude)).toEqual([
    ["input", 30_000, 6, "prompt > 200000 tokens"],
    ["cache_read", 20_000, 0.6, "prompt > 200000 tokens"],
    ["cache_write", 50_000, 7.5, "prompt > 200000 tokens"],
    ["cache_write_1h", 200_000, 12, "prompt > 200000 tokens"],
    ["output", 1_000, 22.5, "prompt > 200000 tokens"],
  ]);

  const gemini = await traceOf("gemini-audio");
  expect(linesOf(gemini)).toEqual([
    ["input", 500, 0.3, null],
    ["input_audio", 1_500, 1, null],
    ["output", 100, 2.5, null],
  ]);

  const flex = await traceOf("openai-flex");
  expect(flex.cost.calls[0].serviceTier).toBe("flex (x0.5)");
  expect(linesOf(flex)).toEqual([
    ["input", 2_000, 0.625, null],
    ["output", 100, 5, null],
  ]);

  const bedrock = await traceOf("bedrock-eu");
  expect(bedrock.cost.calls[0].entry.id).toBe("aws/regional.anthropic.claude-sonnet-4-5-20250929-v1:0");
  expect(linesOf(bedrock)).toEqual([
    ["input", 1_000, 3.3, null],
    ["output", 100, 16.5, null],
  ]);

  // The stored cost (computed at maturation) is the sum of the lines read back.
  for (const t of [claude, gemini, flex, bedrock]) {
    const sum = t.cost.calls[0].lines.reduce((n: number, l: any) => n + l.usd, 0);
    expect(t.cost.totalUsd).toBeCloseTo(sum, 10);
    expect(t.costUsd).toBeCloseTo(sum, 10);
  }

  const unknown = await traceOf("unknown-model");
  expect(unknown.costUsd).toBeNull();
  expect(unknown.cost).toMatchObject({ totalUsd: null, unpricedCalls: 1 });
  expect(unknown.cost.calls[0].reason).toBe(
    'unknown model "acme-unknown-9" (provider openai): no price entry matches it',
  );
  // A finding names the model and the reason (detector unpriced_model), grouped into its issue.
  // The session matures after its trace: read its analysis once complete.
  const problemsOf = (session: string) =>
    waitFor(
      async () => {
        const r = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/${session}/problem-analysis`, {
          token: tenant.platformKey,
        });
        const body: any = r.status === 200 ? await r.json() : null;
        return body?.status === "complete" ? (body.problems as any[]) : null;
      },
      { what: `the problem analysis of ${session}`, timeoutMs: 30_000 },
    );
  const found = (await problemsOf("unknown-model")).filter((p) => p.detector === "unpriced_model");
  expect(found).toHaveLength(1);
  expect(found[0]).toMatchObject({
    severity: "low",
    title: "Call not priced (acme-unknown-9)",
    issueId: expect.any(String),
    evidence: {
      model: "acme-unknown-9",
      reason: 'unknown model "acme-unknown-9" (provider openai): no price entry matches it',
    },
  });
  // Priced calls raise none.
  expect((await problemsOf("claude-1h")).filter((p) => p.detector === "unpriced_model")).toEqual([]);
});

/** The session's metrics once it has matured with `calls` model calls. */
async function maturedMetrics(session: string, calls: number) {
  return waitFor(
    async () => {
      const r = await stack.platformRequest(`/telemetry/metrics/session/${SERVICE}/${session}`, {
        token: tenant.platformKey,
      });
      const body: any = r.status === 200 ? await r.json() : null;
      return body?.status === "complete" && body.metrics?.modelCalls === calls ? body.metrics : null;
    },
    { what: `the metrics of ${session}`, timeoutMs: 30_000 },
  );
}

/** A session read (200 expected). */
async function sessionRead(session: string, path: string) {
  const r = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/${session}/${path}`, {
    token: tenant.platformKey,
  });
  expect(r.status).toBe(200);
  return (await r.json()) as any;
}

test("a session's cost read back call by call (S/cost-breakdown): its total is the sum of the lines, paged by trace", async () => {
  const session = "mixed-rates";
  const at = (s: number) => ({
    start_time: new Date(T0 + s * 1000).toISOString(),
    end_time: new Date(T0 + s * 1000 + 500).toISOString(),
  });
  const claude = rawCall(session, "claude-sonnet-4-5-20250929", {
    prompt_tokens: 300_000,
    completion_tokens: 1_000,
    total_tokens: 301_000,
    prompt_tokens_details: { cached_tokens: 20_000, cache_creation_tokens: 250_000, cache_creation_1h_tokens: 200_000 },
  });
  const gemini = rawCall(session, "gemini-2.5-flash", {
    prompt_tokens: 2_000,
    completion_tokens: 100,
    total_tokens: 2_100,
    prompt_tokens_details: { audio_tokens: 1_500 },
  });
  const flex = rawCall(session, "gpt-5", { prompt_tokens: 2_000, completion_tokens: 100, total_tokens: 2_100 });
  (flex.request as any).service_tier = "flex";
  (flex.responses[0] as any).service_tier = "flex";
  const traces = [claude, gemini, flex].map((t, i) => ({ ...t, trace_id: `mixed-${i}`, ...at(i) }));
  for (const t of traces) await send("/raw/traces", t);

  const metrics = await maturedMetrics(session, 3);

  const all = await sessionRead(session, "cost-breakdown");
  expect(all.traces.map((t: any) => t.traceId)).toEqual(["mixed-0", "mixed-1", "mixed-2"]);
  expect(all).toMatchObject({ currency: "USD", calls: 3, unpricedCalls: 0, pagination: { hasMore: false } });
  const lines = all.traces.flatMap((t: any) => t.cost.calls.flatMap((c: any) => c.lines));
  expect(lines.map((l: any) => l.kind)).toEqual([
    "input",
    "cache_read",
    "cache_write",
    "cache_write_1h",
    "output",
    "input",
    "input_audio",
    "output",
    "input",
    "output",
  ]);
  const sum = lines.reduce((n: number, l: any) => n + l.usd, 0);
  expect(all.totalUsd).toBeCloseTo(sum, 9);
  expect(all.pricedUsd).toBe(all.totalUsd);
  // The same total the session's metrics and its cost by model computed at maturation.
  expect(metrics.costUsd).toBeCloseTo(all.totalUsd, 9);
  expect((await sessionRead(session, "cost-by-model")).totalCostUsd).toBeCloseTo(all.totalUsd, 9);
  // Claude: 1.09 USD at the >200k tier; Gemini audio; gpt-5 flex at half price.
  expect(all.traces[2].cost.calls[0].serviceTier).toBe("flex (x0.5)");

  // A page at a time: the cursor walks the traces in start order, and the pages' totals add up.
  const first = await sessionRead(session, "cost-breakdown?limit=2");
  expect(first.traces.map((t: any) => t.traceId)).toEqual(["mixed-0", "mixed-1"]);
  expect(first.pagination).toMatchObject({ hasMore: true, nextOffset: 2 });
  const second = await sessionRead(session, `cost-breakdown?limit=2&cursor=${first.pagination.nextCursor}`);
  expect(second.traces.map((t: any) => t.traceId)).toEqual(["mixed-2"]);
  expect(second.pagination.hasMore).toBe(false);
  expect(first.totalUsd + second.totalUsd).toBeCloseTo(all.totalUsd, 9);

  // A trace stored before migration 0015 (its payload as jsonb, no deflated copy) reads the same.
  const sql = stack.database.sql;
  const [row] = await sql<{ id: string; payload_z: Uint8Array }[]>`
    select tr.id, z.payload_z from traces tr join trace_payloads z on z.trace_pk = tr.id where tr.trace_id = 'mixed-1'`;
  await sql`update traces set payload = ${sql.json(decodePayload(row))} where id = ${row.id}`;
  await sql`delete from trace_payloads where trace_pk = ${row.id}`;
  const older = await sessionRead(session, "cost-breakdown");
  expect(older.traces[1]).toEqual(all.traces[1]);
  expect(older.totalUsd).toBe(all.totalUsd);

  // An unpriced call: the page's total is null, the priced sum and the count say what is known.
  const unknown = await sessionRead("unknown-model", "cost-breakdown");
  expect(unknown).toMatchObject({ totalUsd: null, pricedUsd: 0, calls: 1, unpricedCalls: 1 });
  expect(unknown.traces[0].cost.calls[0].reason).toContain('unknown model "acme-unknown-9"');

  // A session of another tenant's service, or none: 404 as every session read.
  const missing = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/no-such/cost-breakdown`, {
    token: tenant.platformKey,
  });
  expect(missing.status).toBe(404);
  const bad = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/${session}/cost-breakdown?limit=501`, {
    token: tenant.platformKey,
  });
  expect(bad.status).toBe(400);
});

/** An OTLP/JSON span under an instrumentation scope (the AI SDK's "ai", OpenInference's), in a session. */
function scopedSpan(
  scope: { name: string; version: string },
  spanId: string,
  session: string,
  attributes: Record<string, string | number>,
) {
  const span = {
    traceId: "78".repeat(16),
    spanId,
    name: "llm",
    kind: 3,
    startTimeUnixNano: `${T0 + Number.parseInt(spanId, 16) * 1000}000000`,
    endTimeUnixNano: `${T0 + Number.parseInt(spanId, 16) * 1000 + 500}000000`,
    attributes: Object.entries({ "session.id": session, ...attributes }).map(([k, v]) => kv(k, v)),
  };
  return {
    resourceSpans: [
      { resource: { attributes: [kv("service.name", SERVICE)] }, scopeSpans: [{ scope, spans: [span] }] },
    ],
  };
}

test("the same rates arriving over OTLP (AI SDK provider metadata, OpenInference audio, OpenAI's tier, a Bedrock profile) read back line by line", async () => {
  const session = "otlp-rates";
  const ai = { name: "ai", version: "5.0.60" };
  // The Vercel AI SDK with Anthropic: v5's usage attributes, Anthropic's own usage in the metadata.
  await send(
    "/v1/traces",
    scopedSpan(ai, "0000000000000011", session, {
      "ai.operationId": "ai.generateText.doGenerate",
      "gen_ai.system": "anthropic.messages",
      "gen_ai.request.model": "claude-sonnet-4-5-20250929",
      "gen_ai.response.model": "claude-sonnet-4-5-20250929",
      "ai.usage.inputTokens": 50_000,
      "ai.usage.outputTokens": 1_000,
      "ai.usage.cachedInputTokens": 20_000,
      "gen_ai.usage.input_tokens": 50_000,
      "gen_ai.usage.output_tokens": 1_000,
      "ai.response.providerMetadata": JSON.stringify({
        anthropic: {
          usage: ANTHROPIC_1H_USAGE,
          cacheCreationInputTokens: 250_000,
        },
      }),
    }),
  );
  // OpenInference's Google GenAI instrumentation: audio input as llm.token_count.prompt_details.audio.
  await send(
    "/v1/traces",
    scopedSpan({ name: "openinference.instrumentation.google_genai", version: "0.1.5" }, "0000000000000012", session, {
      "openinference.span.kind": "LLM",
      "llm.provider": "google",
      "llm.model_name": "gemini-2.5-flash",
      "llm.token_count.prompt": 2_000,
      "llm.token_count.completion": 100,
      "llm.token_count.total": 2_100,
      "llm.token_count.prompt_details.audio": 1_500,
    }),
  );
  // The AI SDK with OpenAI's Responses API on the flex tier (the tier only in the metadata).
  await send(
    "/v1/traces",
    scopedSpan(ai, "0000000000000013", session, {
      "gen_ai.system": "openai.responses",
      "gen_ai.request.model": "gpt-5",
      "gen_ai.usage.input_tokens": 2_000,
      "gen_ai.usage.output_tokens": 100,
      "ai.response.providerMetadata": JSON.stringify({ openai: { responseId: "resp_9", serviceTier: "flex" } }),
    }),
  );
  // Bedrock through an eu. profile, and a Bedrock flex call (no price for its tier: unpriced, named).
  await send(
    "/v1/traces",
    scopedSpan(ai, "0000000000000014", session, {
      "gen_ai.system": "amazon-bedrock",
      "gen_ai.request.model": "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "gen_ai.usage.input_tokens": 1_000,
      "gen_ai.usage.output_tokens": 100,
      "ai.response.providerMetadata": JSON.stringify({ bedrock: { serviceTier: { type: "default" } } }),
    }),
  );
  await send(
    "/v1/traces",
    scopedSpan(ai, "0000000000000015", session, {
      "gen_ai.system": "amazon-bedrock",
      "gen_ai.request.model": "us.amazon.nova-pro-v1:0",
      "gen_ai.usage.input_tokens": 1_000,
      "gen_ai.usage.output_tokens": 100,
      "ai.response.providerMetadata": JSON.stringify({ bedrock: { serviceTier: { type: "flex" } } }),
    }),
  );
  const metrics = await maturedMetrics(session, 5);
  const read = await sessionRead(session, "cost-breakdown");
  const calls = read.traces.map((t: any) => t.cost.calls[0]);
  const lines = (c: any) => c.lines.map((l: any) => [l.kind, l.tokens, l.usdPerMillion, l.tier]);
  expect(calls.map((c: any) => c.model)).toEqual([
    "claude-sonnet-4-5-20250929",
    "gemini-2.5-flash",
    "gpt-5",
    "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "us.amazon.nova-pro-v1:0",
  ]);
  expect(lines(calls[0])).toEqual([
    ["input", 50_000, 6, "prompt > 200000 tokens"],
    ["cache_read", 20_000, 0.6, "prompt > 200000 tokens"],
    ["cache_write", 50_000, 7.5, "prompt > 200000 tokens"],
    ["cache_write_1h", 200_000, 12, "prompt > 200000 tokens"],
    ["output", 1_000, 22.5, "prompt > 200000 tokens"],
  ]);
  expect(lines(calls[1])).toEqual([
    ["input", 500, 0.3, null],
    ["input_audio", 1_500, 1, null],
    ["output", 100, 2.5, null],
  ]);
  expect([calls[2].serviceTier, lines(calls[2])]).toEqual([
    "flex (x0.5)",
    [
      ["input", 2_000, 0.625, null],
      ["output", 100, 5, null],
    ],
  ]);
  expect([calls[3].entry.id, lines(calls[3])]).toEqual([
    "aws/regional.anthropic.claude-sonnet-4-5-20250929-v1:0",
    [
      ["input", 1_000, 3.3, null],
      ["output", 100, 16.5, null],
    ],
  ]);
  expect(calls[4]).toMatchObject({ costUsd: null, lines: [] });
  expect(calls[4].reason).toStartWith('service tier "flex": no price for it (aws/');
  expect(read).toMatchObject({ calls: 5, unpricedCalls: 1, totalUsd: null });
  const priced = calls.slice(0, 4).reduce((n: number, c: any) => n + c.costUsd, 0);
  expect(read.pricedUsd).toBeCloseTo(priced, 9);
  // Maturation priced the same calls: the session's priced cost is the sum of those lines.
  expect(metrics.costUsd).toBeNull();
  expect(metrics.pricedCostUsd).toBeCloseTo(read.pricedUsd, 9);
});
