import { RE2JS } from "re2js";

/** A compiled user pattern: only a yes/no test is needed by the checks. */
export interface SafePattern {
  test(text: string): boolean;
}

const FLAG_BITS: Record<string, number> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
  u: 0, // RE2 always matches by code point
};

/**
 * Compiles a tenant's regular expression (an evaluator's pattern check, a JSON-schema `pattern`)
 * with RE2 (the `re2js` port): matching is linear in the input, so no expression a tenant writes
 * can backtrack for minutes and stall the runner every tenant shares (docs/evaluations.md,
 * "Checks"). RE2 syntax: no lookaround and no backreferences; those are refused at compile time.
 * Throws an Error whose message says what is wrong.
 */
export function compilePattern(pattern: string, flags = ""): SafePattern {
  let bits = 0;
  for (const f of flags) {
    const bit = FLAG_BITS[f];
    if (bit === undefined) throw new Error(`unknown flag ${JSON.stringify(f)} (i, m, s or u)`);
    bits |= bit;
  }
  const compiled = RE2JS.compile(pattern, bits);
  return { test: (text) => compiled.matcher(text).find() };
}
