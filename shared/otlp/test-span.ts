import type { OtlpSpan } from "./decode.ts";

/** A decoded OTLP span for tests: a 2 s client span of service `svc`, no scope, the given attributes. */
export const testSpan = (attributes: Record<string, unknown>, extra: Partial<OtlpSpan> = {}): OtlpSpan => ({
  traceId: "ab".repeat(16),
  spanId: "cd".repeat(8),
  parentSpanId: null,
  name: "chat",
  kind: 3,
  startTimeUnixNano: "1760000000000000000",
  endTimeUnixNano: "1760000002000000000",
  attributes,
  events: [],
  status: { code: 0, message: null },
  resource: { "service.name": "svc" },
  scope: { name: null, version: null },
  ...extra,
});
