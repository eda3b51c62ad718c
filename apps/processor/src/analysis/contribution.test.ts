import { expect, test } from "bun:test";
import fc from "fast-check";
import { decodePayload, encodePayload } from "@cellar/shared/db/payload-codec";
import { DEFAULT_PRICE_BOOK } from "@cellar/shared/pricing/table";
import { decodeTraceContribution, encodeTraceContribution, traceContributionOf } from "./contribution.ts";
import { analyzeTrace } from "./session.ts";

/**
 * A trace's analysis from the contribution the writer stores equals the one trace maturation
 * computed before from the stored payload, inflated and parsed whole (the oracle:
 * store.ts `loadTracesForMetrics` as it was), over generated payloads: usage present, partial,
 * absent or of the wrong type, several responses, models known and unknown, odd values where
 * the schema leaves room (docs/analyse-once.md).
 */
const json = fc.jsonValue({ maxDepth: 2 });
const usageArb = fc.oneof(
  fc.constant(undefined),
  json,
  fc.record(
    {
      prompt_tokens: fc.oneof(fc.nat(100_000), json),
      completion_tokens: fc.oneof(fc.nat(100_000), json),
      total_tokens: fc.oneof(fc.nat(200_000), fc.constant(0)),
      prompt_tokens_details: fc.record({ cached_tokens: fc.nat(1_000), cache_creation_tokens: fc.nat(1_000) }),
      completion_tokens_details: fc.record({ reasoning_tokens: fc.nat(1_000), audio_tokens: fc.nat(100) }),
    },
    { requiredKeys: [] },
  ),
);
const messageArb = fc.oneof(
  fc.constant(undefined),
  fc.record(
    {
      role: fc.constantFrom("assistant", "user", "tool"),
      content: fc.oneof(
        fc.string(),
        fc.constant(null),
        fc.array(fc.record({ type: fc.constant("text"), text: fc.string() })),
      ),
      refusal: fc.oneof(fc.constant(null), fc.string()),
      tool_calls: fc.array(
        fc.record({
          id: fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null)),
          type: fc.constant("function"),
          function: fc.record({ name: fc.constantFrom("search", "lookup"), arguments: fc.oneof(fc.string(), json) }),
        }),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: ["role"] },
  ),
);
const modelArb = fc.oneof(
  fc.constantFrom("gpt-4o-mini", "gpt-4o-mini-2024-07-18", "claude-3-5-sonnet-20241022", "no-such-model"),
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
);
const responseArb = fc.record(
  {
    id: fc.string({ maxLength: 8 }),
    model: modelArb,
    choices: fc.array(
      fc.record({
        index: fc.nat(2),
        message: messageArb,
        finish_reason: fc.oneof(fc.constantFrom("stop", "length", "tool_calls"), fc.constant(null)),
      }),
      { maxLength: 2 },
    ),
    usage: usageArb,
    extra: json,
  },
  { requiredKeys: ["choices"] },
);
const payloadArb = fc.record({
  start: fc.integer({ min: Date.parse("2024-01-01"), max: Date.parse("2027-01-01") }),
  durationMs: fc.nat(120_000),
  model: modelArb,
  messages: fc.array(fc.record({ role: fc.constantFrom("system", "user", "assistant"), content: fc.string() }), {
    maxLength: 6,
  }),
  responses: fc.oneof(fc.array(responseArb, { minLength: 1, maxLength: 3 }), fc.constant(undefined)),
});

test("a trace's analysis from its stored contribution is the analysis from its stored payload", () => {
  fc.assert(
    fc.property(payloadArb, (g) => {
      const payload: Record<string, any> = {
        provider: "openai",
        session_id: "s",
        start_time: new Date(g.start).toISOString(),
        end_time: new Date(g.start + g.durationMs).toISOString(),
        request: { model: g.model, messages: g.messages, temperature: 0.2 },
        responses: g.responses,
      };
      const input = { traceId: "t1", startTime: new Date(g.start), endTime: new Date(g.start + g.durationMs) };
      // The oracle: the stored payload read back and reduced, as trace maturation did.
      const stored = decodePayload({ payload_z: encodePayload(payload) });
      const before = analyzeTrace({ ...input, payload: traceContributionOf(stored) }, DEFAULT_PRICE_BOOK);
      const after = analyzeTrace(
        { ...input, payload: decodeTraceContribution(encodeTraceContribution(payload)) },
        DEFAULT_PRICE_BOOK,
      );
      expect(JSON.stringify(after)).toBe(JSON.stringify(before));
      expect(after).toEqual(before);
    }),
    { numRuns: 400 },
  );
});
