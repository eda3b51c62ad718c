import { describe, expect, test } from "bun:test";
import { injectionInContent } from "../apps/processor/src/analysis/injection.ts";
import { DEVELOPMENT_CASES } from "./corpus/development-cases.ts";

/**
 * The round-2 development cases (test/corpus/development-cases.ts) read directly by the rules,
 * without the apps: each injection is found, each hard negative gives nothing. `npm run score`
 * scores the same cases end to end.
 */
describe("injection development cases", () => {
  for (const c of DEVELOPMENT_CASES) {
    const clean = c.class.startsWith("clean:");
    test(`${c.class} ${c.id}`, () => {
      const hit = injectionInContent(c.text, 1_000_000);
      if (clean) expect(hit).toBeNull();
      else expect(hit).not.toBeNull();
    });
  }
});
