// Generated OTLP requests for the offload's tests (offload.test.ts, offload-doors.test.ts): model
// calls, tool calls, plain spans and log records, over services the checks accept and refuse.
import fc from "fast-check";
import type { OtlpKey } from "../otlp/items.ts";

export const kv = (key: string, value: unknown) => ({
  key,
  value:
    typeof value === "number"
      ? { intValue: String(value) }
      : typeof value === "boolean"
        ? { boolValue: value }
        : { stringValue: String(value) },
});

/** One generated span: model calls, tool calls, plain spans, and some the checks refuse. */
export const spanArb = fc.record({
  op: fc.constantFrom("chat", "execute_tool", "embeddings", "plain"),
  model: fc.constantFrom("gpt-4o-mini", "claude-sonnet-4", "ünïcödé-🙂", ""),
  session: fc.string({ minLength: 0, maxLength: 12 }),
  inputTokens: fc.integer({ min: -5, max: 100_000 }),
  startSec: fc.integer({ min: 0, max: 2_000_000_000 }),
  durationMs: fc.integer({ min: -10, max: 100_000 }),
  text: fc.string({ maxLength: 200 }),
  traceByte: fc.integer({ min: 0, max: 255 }),
  spanNo: fc.integer({ min: 1, max: 1_000_000 }),
});
export type SpanSpec = typeof spanArb extends fc.Arbitrary<infer T> ? T : never;

export function spanOf(s: SpanSpec) {
  const attrs: Array<ReturnType<typeof kv>> = [];
  if (s.op !== "plain") {
    attrs.push(kv("gen_ai.operation.name", s.op), kv("gen_ai.provider.name", "openai"));
    if (s.model) attrs.push(kv("gen_ai.request.model", s.model));
    attrs.push(kv("gen_ai.usage.input_tokens", s.inputTokens));
    attrs.push(
      kv("gen_ai.input.messages", JSON.stringify([{ role: "user", parts: [{ type: "text", content: s.text }] }])),
    );
  }
  if (s.session) attrs.push(kv("session.id", s.session));
  const start = BigInt(s.startSec) * 1_000_000_000n;
  return {
    traceId: s.traceByte.toString(16).padStart(2, "0").repeat(16),
    spanId: s.spanNo.toString(16).padStart(16, "0"),
    name: s.op,
    kind: 3,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + BigInt(s.durationMs) * 1_000_000n),
    attributes: attrs,
  };
}

export const exportArb = fc.array(
  fc.record({
    service: fc.constantFrom("notes-app", "billing", "", "bad service!"),
    spans: fc.array(spanArb, { minLength: 1, maxLength: 40 }),
  }),
  { minLength: 1, maxLength: 4 },
);
export const tracesOf = (resources: Array<{ service: string; spans: SpanSpec[] }>) => ({
  resourceSpans: resources.map((r) => ({
    resource: { attributes: r.service ? [kv("service.name", r.service)] : [] },
    scopeSpans: [{ scope: { name: "t" }, spans: r.spans.map(spanOf) }],
  })),
});
export const logsOf = (resources: Array<{ service: string; spans: SpanSpec[] }>) => ({
  resourceLogs: resources.map((r) => ({
    resource: { attributes: r.service ? [kv("service.name", r.service)] : [] },
    scopeLogs: [
      {
        logRecords: r.spans.map((s) => ({
          timeUnixNano: String(BigInt(s.startSec) * 1_000_000_000n),
          eventName: s.op,
          traceId: s.traceByte.toString(16).padStart(2, "0").repeat(16),
          body: { stringValue: s.text },
          attributes: s.session ? [kv("session.id", s.session)] : [],
        })),
      },
    ],
  })),
});

export const KEYS: OtlpKey[] = [
  { tenantId: "00000000-0000-4000-8000-000000000001", kind: "telemetry", serviceName: null },
  { tenantId: "00000000-0000-4000-8000-000000000002", kind: "dsn-server", serviceName: "dsn-svc" },
];
