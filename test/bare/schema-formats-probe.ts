/**
 * Run as its own process by test/schema-formats.test.ts: it loads only the schema modules that
 * ingest and the processor share (no Elysia, no app), walks every exported schema for the formats
 * it names, and decodes an INGEST message of each provider the way the processor does. Prints one
 * JSON line; the test asserts on it.
 */
import { FormatRegistry, Kind, type TSchema } from "@sinclair/typebox";
import * as payloads from "../../shared/payloads.ts";
import { SCHEMA_FORMATS, formatsUsedBy } from "../../shared/schema-formats.ts";
import { ingestStream } from "../../shared/nats/catalogue.ts";

const isSchema = (v: unknown): v is TSchema => typeof v === "object" && v !== null && Kind in v;
const used: Record<string, string[]> = {};
for (const [name, value] of Object.entries(payloads)) if (isSchema(value)) used[name] = [...formatsUsedBy(value)];
const foreign = Object.entries(used).flatMap(([name, formats]) =>
  formats.filter((f) => !(f in SCHEMA_FORMATS)).map((f) => `${name}:${f}`),
);
const unregistered = Object.values(used)
  .flat()
  .filter((f) => !FormatRegistry.Has(f));

const now = "2026-11-25T12:00:00.000Z";
const otlpTrace = (provider: string) => ({
  kind: "trace",
  messageId: `probe-${provider}`,
  tenantId: "00000000-0000-4000-8000-000000000001",
  serviceName: "probe",
  receivedAt: now,
  payload: {
    provider,
    service_name: "probe",
    session_id: "s-1",
    trace_id: "0af7651916cd43dd8448eb211c80319c",
    request: { model: "claude-sonnet-4", messages: [{ role: "user", content: "Hi" }] },
    responses: [
      {
        id: "msg_1",
        object: "chat.completion",
        model: "claude-sonnet-4",
        choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
    ],
    start_time: now,
    end_time: now,
    otel: { span_id: "b7ad6b7169203331" },
  },
});
const decoded: Record<string, string> = {};
for (const provider of ["openai", "anthropic", "gcp.gemini", "aws.bedrock"]) {
  const r = ingestStream.codec.decode(
    "cellar.ingest.x",
    new TextEncoder().encode(JSON.stringify(otlpTrace(provider))),
    undefined,
  );
  decoded[provider] = r.ok ? "ok" : r.error;
}
console.log(
  JSON.stringify({
    used,
    foreign,
    unregistered,
    decoded,
    elysiaLoaded: Object.keys(require.cache ?? {}).some((k) => k.includes("/elysia/")),
  }),
);
