import { afterAll, beforeAll, expect, test } from "bun:test";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { createIngestFixture, type IngestFixture } from "../apps/ingest/test/fixture";
import { cellarSpanExporter, cellarSpanProcessor } from "../sdks/typescript/src/otel";

// cellar-sdk/otel: the real OpenTelemetry SDK exporting to the ingest host's /v1/traces, set up
// by the DSN alone (its endpoint and bearer), on the app's own provider (no global registration).
let fx: IngestFixture;
let server: ReturnType<typeof Bun.serve>;
let dsn: string;

beforeAll(async () => {
  fx = await createIngestFixture();
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => fx.app.handle(req) });
  const endpoint = `http://127.0.0.1:${server.port}`;
  dsn = (await fx.key("dsn-server", { serviceName: "otel-app", endpoint })).key;
});
afterAll(async () => {
  server?.stop(true);
  await fx?.stop();
});

test("a GenAI span through cellarSpanProcessor is stored as a trace of the DSN's service", async () => {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "unknown_service:node" }),
    spanProcessors: [cellarSpanProcessor({ dsn })],
  });
  const before = await fx.stored();
  const span = provider.getTracer("app").startSpan("chat gpt-4o-mini", {
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.usage.output_tokens": 3,
      "gen_ai.conversation.id": "otel-session-1",
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Hi" }] }]),
      "gen_ai.output.messages": JSON.stringify([
        { role: "assistant", parts: [{ type: "text", content: "Hello!" }], finish_reason: "stop" },
      ]),
    },
  });
  span.end();
  await provider.forceFlush();
  expect(await fx.stored()).toBe(before + 1);
  const message = await fx.last();
  // One INGEST message per OTLP request (issue 36): the span is its one trace item.
  expect(message).toMatchObject({ kind: "batch", tenantId: fx.tenant.tenantId });
  expect(message.items).toHaveLength(1);
  expect(message.items[0]).toMatchObject({
    kind: "trace",
    serviceName: "otel-app",
    payload: { session_id: "otel-session-1", responses: [{ usage: { prompt_tokens: 12, completion_tokens: 3 } }] },
  });
  await provider.shutdown();
});

test("a legacy DSN needs the endpoint option", () => {
  expect(() => cellarSpanExporter({ dsn: `svc-ing-s-${"a".repeat(32)}` })).toThrow("endpoint");
  expect(cellarSpanExporter({ dsn: `svc-ing-s-${"a".repeat(32)}`, endpoint: "http://x.test" })).toBeDefined();
});
