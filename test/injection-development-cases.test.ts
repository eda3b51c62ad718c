import { describe, expect, test } from "bun:test";
import { injectionInContent } from "../apps/processor/src/analysis/injection.ts";
import { PREFILTER } from "../apps/processor/src/analysis/injection-detector.ts";
import { DEVELOPMENT_CASES } from "./corpus/development-cases.ts";

/**
 * The round-2 development cases (test/corpus/development-cases.ts) read directly by the rules,
 * without the apps: each injection is found, each hard negative gives nothing. `npm run score`
 * scores the same cases end to end.
 */
/**
 * Development injections the rules leave alone on purpose, said in docs/analysis.md ("What the
 * rules miss"): a bare "Replace ... with ..." in an e-mail reads as the e-mail's own request.
 */
const KNOWN_MISSES = new Set(["bipia-train-alphanumeric-substitution-3", "bipia-train-homophonic-substitution-4"]);

describe("injection development cases", () => {
  test("the known misses are still development cases", () => {
    for (const id of KNOWN_MISSES) expect(DEVELOPMENT_CASES.some((c) => c.id === id)).toBe(true);
  });
  for (const c of DEVELOPMENT_CASES.filter((d) => !KNOWN_MISSES.has(d.id))) {
    const clean = c.class.startsWith("clean:");
    test(`${c.class} ${c.id}`, () => {
      const hit = injectionInContent(c.text, 1_000_000);
      if (clean) expect(hit).toBeNull();
      else {
        expect(hit).not.toBeNull();
        // The detector scans only what passes its keyword prefilter (found end to end, not just here).
        expect(PREFILTER.test(c.text)).toBe(true);
      }
    });
  }
});
