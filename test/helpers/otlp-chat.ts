/** One OTLP/JSON chat span in a resource of its own (GenAI conventions), for tests that post to /v1/traces. */
export const kv = (key: string, value: string | number) => ({
  key,
  value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
});

export function otlpChat(o: {
  service: string;
  traceId: string;
  spanId: string;
  provider: string;
  model: string;
  session: string;
  startMs: number;
  /** Further attributes (usage, service tier...). */
  attributes: Record<string, string | number>;
}) {
  const span = {
    traceId: o.traceId,
    spanId: o.spanId,
    name: `chat ${o.model}`,
    kind: 3,
    startTimeUnixNano: `${o.startMs}000000`,
    endTimeUnixNano: `${o.startMs + 1000}000000`,
    attributes: [
      kv("gen_ai.operation.name", "chat"),
      kv("gen_ai.provider.name", o.provider),
      kv("gen_ai.request.model", o.model),
      kv("gen_ai.conversation.id", o.session),
      kv("gen_ai.input.messages", JSON.stringify([{ role: "user", parts: [{ type: "text", content: "hi" }] }])),
      kv(
        "gen_ai.output.messages",
        JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "hello" }], finish_reason: "stop" }]),
      ),
      ...Object.entries(o.attributes).map(([k, v]) => kv(k, v)),
    ],
  };
  return {
    resourceSpans: [{ resource: { attributes: [kv("service.name", o.service)] }, scopeSpans: [{ spans: [span] }] }],
  };
}
