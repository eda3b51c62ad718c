import { describe, expect, test } from "bun:test";
import { fakePipeline, jsonRequest } from "../../test/fake-pipeline.ts";
import { createOtlpIngest } from "./routes.ts";

// The OTLP handler on its own, over a pipeline of fakes (test/otlp-ingest.test.ts drives it
// through the app with real NATS and every client encoding).
const kv = (key: string, value: string | number) => ({
  key,
  value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
});
const exportOf = (attrs: Record<string, string | number>) => ({
  resourceSpans: [
    {
      resource: { attributes: [kv("service.name", "notes-app")] },
      scopeSpans: [
        {
          scope: { name: "test" },
          spans: [
            {
              traceId: "ab".repeat(16),
              spanId: "01".repeat(8),
              name: "chat",
              kind: 3,
              startTimeUnixNano: "1760000000000000000",
              endTimeUnixNano: "1760000001000000000",
              attributes: Object.entries(attrs).map(([k, v]) => kv(k, v)),
            },
          ],
        },
      ],
    },
  ],
});

function handler(opts: Parameters<typeof fakePipeline>[0] = {}) {
  const fake = fakePipeline(opts);
  const otlp = createOtlpIngest({
    authenticate: fake.pipeline.authenticate,
    takeRateToken: (id) => fake.pipeline.takeRateTokens(id),
    store: fake.pipeline.store,
    maxBodyBytes: fake.pipeline.maxBodyBytes,
    logger: fake.pipeline.logger,
  });
  return { otlp, stored: fake.stored };
}

describe("OTLP traces handler", () => {
  test("a model-call span is stored as a trace; a span without GenAI meaning is accepted and not stored", async () => {
    const { otlp, stored } = handler();
    const call = exportOf({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.usage.input_tokens": 4,
      "gen_ai.usage.output_tokens": 2,
    });
    const res = await otlp("traces", jsonRequest("/v1/traces", call), "r1", undefined);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(stored.map((s) => [s.kind, s.serviceName, (s.payload as any).request.model])).toEqual([
      ["trace", "notes-app", "gpt-4o-mini"],
    ]);
    const plain = await otlp("traces", jsonRequest("/v1/traces", exportOf({ "http.method": "GET" })), "r2", undefined);
    expect(plain.status).toBe(200);
    expect(stored.length).toBe(1);
  });

  test("failures answer a google.rpc.Status with the contract's error field", async () => {
    const { otlp } = handler();
    const res = await otlp("traces", jsonRequest("/v1/traces", "{"), "r", undefined);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 3, error: expect.any(String) });
    const text = await otlp(
      "traces",
      jsonRequest("/v1/traces", "{}", { "content-type": "text/plain" }),
      "r",
      undefined,
    );
    expect(text.status).toBe(415);
  });
});
