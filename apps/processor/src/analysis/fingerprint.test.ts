import { expect, test } from "bun:test";
import fc from "fast-check";
import { canonicalJson } from "@cellar/shared/crypto";
import { messageFingerprint, toolCallsOf } from "./transcript.ts";

/** The first version (a regex replace per text, canonical JSON always), kept as the oracle. */
function firstFingerprint(m: any): string {
  const content = Array.isArray(m?.content)
    ? m.content.map((p: any) => (typeof p?.text === "string" ? p.text : canonicalJson(p))).join("\n")
    : m?.content;
  const text =
    typeof content === "string" ? content.replace(/\s+/g, " ").trim() : content == null ? "" : canonicalJson(content);
  const role = m?.role === "developer" ? "system" : m?.role;
  const calls = toolCallsOf(m).map((c) => [c.id, c.name, c.arguments.replace(/\s+/g, "")]);
  return canonicalJson([role ?? null, text, calls, m?.tool_call_id ?? null]);
}

// Text with every kind of whitespace JavaScript's \s knows, runs of it, at either end.
const spacey = fc.stringMatching(/^[ab \t\n\r\u00a0\u2028\u3000\ufeff.]{0,24}$/);
const anything = fc.oneof(
  spacey,
  fc.constant(null),
  fc.integer(),
  fc.dictionary(fc.constantFrom("b", "a", "text"), spacey, { maxKeys: 3 }),
);
const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom("user", "assistant", "developer", "system", "tool"), anything),
    content: fc.oneof(
      spacey,
      anything,
      fc.array(fc.oneof(fc.record({ type: fc.constant("text"), text: spacey }), anything), { maxLength: 3 }),
    ),
    tool_calls: fc.array(
      fc.record({
        id: fc.oneof(spacey, anything),
        function: fc.record({ name: fc.oneof(spacey, anything), arguments: fc.oneof(spacey, anything) }),
      }),
      { maxLength: 2 },
    ),
    function_call: fc.record({ name: spacey, arguments: fc.oneof(spacey, anything) }),
    tool_call_id: anything,
  },
  { requiredKeys: [] },
);

test("message fingerprints: the same text as the first version, for any message", () => {
  fc.assert(
    fc.property(fc.oneof(message, anything), (m) => {
      expect(messageFingerprint(m)).toBe(firstFingerprint(m));
    }),
    { numRuns: 2_000 },
  );
});
