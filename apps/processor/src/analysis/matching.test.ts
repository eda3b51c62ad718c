import { expect, test } from "bun:test";
import fc from "fast-check";
import { REFUSAL_PATTERNS, refusalPhrase } from "./refusal.ts";
import { maskQuoted, normalizeText, SENTENCE_ENDS, type Sentence, sentencesOf } from "./text.ts";

/** The first sentence split (a match object per end), kept as the oracle. */
function firstSentences(text: string): Sentence[] {
  const out: Sentence[] = [];
  let from = 0;
  const push = (to: number) => {
    const raw = text.slice(from, to);
    const body = raw.trim();
    if (body) out.push({ text: body, start: from + raw.length - raw.trimStart().length });
  };
  for (const m of text.matchAll(/[.!?;。！？；।॥؟۔…\n]/g)) {
    push(m.index);
    from = m.index + 1;
  }
  push(text.length);
  return out;
}

/** The first refusal lookup (each pattern tried on each sentence), kept as the oracle. */
const patterns = Object.entries(REFUSAL_PATTERNS).flatMap(([language, list]) => list.map((re) => ({ language, re })));
function firstRefusal(text: string) {
  const normalized = normalizeText(text);
  for (const s of sentencesOf(maskQuoted(normalized))) {
    const hit = patterns.find((p) => p.re.test(s.text));
    if (hit) return { sentence: normalized.slice(s.start, s.start + s.text.length), language: hit.language };
  }
  return null;
}

// Texts of refusal phrasings, their near misses, quotes, every sentence end and odd code units.
const piece = fc.oneof(
  fc.constantFrom(
    "I'm sorry, but I can't help with that",
    "I can't believe it",
    "Sorry, I cannot assist",
    "no puedo ayudar",
    "Lo siento, no puedo",
    "我无法帮助你",
    "抱歉，我不能",
    "Ich kann Ihnen nicht helfen",
    "Я не могу помочь",
    "ขออภัย ไม่สามารถ",
    "माफ करें, मैं मदद नहीं कर सकता",
    '"I can\'t help"',
    "> I cannot help",
    "```",
    "Here is the answer",
    "e\u0301",
  ),
  fc.constantFrom(...SENTENCE_ENDS, " ", "  ", "\t", "\r\n", "\u2028", "\u00a0"),
  fc.string({ maxLength: 6 }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 3 }).map((units) => String.fromCharCode(...units)),
);
const text = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(""));

test("sentences: the same split as the first version, for any text", () => {
  fc.assert(
    fc.property(text, (t) => {
      expect(sentencesOf(t)).toEqual(firstSentences(t));
    }),
    { numRuns: 2_000 },
  );
});

test("refusal phrasing: the same sentence and language as trying each pattern in turn, for any text", () => {
  let refusals = 0;
  fc.assert(
    fc.property(text, (t) => {
      const expected = firstRefusal(t);
      if (expected) refusals++;
      expect(refusalPhrase(t)).toEqual(expected);
    }),
    { numRuns: 1_000 },
  );
  expect(refusals).toBeGreaterThan(0); // the texts do hold refusals
});
