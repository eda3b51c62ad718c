import { describe, expect, test } from "bun:test";
import { runCheck } from "./checks.ts";
import { jsonSchemaProblem } from "./json-schema.ts";
import { compilePattern } from "./safe-pattern.ts";
import type { EvalContext } from "./context.ts";

const withAnswer = (finalAnswer: string) => ({ finalAnswer }) as unknown as EvalContext;

describe("tenant patterns run by RE2", () => {
  test("flags i, m, s and u mean what they mean in JavaScript", () => {
    expect(compilePattern("OSLO", "i").test("to oslo")).toBe(true);
    expect(compilePattern("^b", "m").test("a\nb")).toBe(true);
    expect(compilePattern("^b").test("a\nb")).toBe(false);
    expect(compilePattern("a.b", "s").test("a\nb")).toBe(true);
    expect(compilePattern("a.b").test("a\nb")).toBe(false);
    expect(compilePattern("^.$", "u").test("😀")).toBe(true);
    expect(() => compilePattern("a", "g")).toThrow("unknown flag");
  });

  test("lookaround and backreferences are refused with a message, not run", () => {
    for (const p of ["(?<=x)a", "a(?=b)", "(a)\\1", "(?!x)y"]) expect(() => compilePattern(p)).toThrow();
  });

  test("expressions that backtrack catastrophically in JavaScript finish on the longest answer a check reads", () => {
    // In V8/JSC each of these on 100,000 characters runs for longer than anyone waits; RE2 is linear.
    const hostile = ["(a+)+$", "(a|aa)+$", "(a*)*b", "^(\\w+\\s?)*$", "(x+x+)+y"];
    const answer = `${"a".repeat(99_990)}!`;
    for (const pattern of hostile) {
      const verdict = runCheck({ type: "pattern", pattern, mode: "avoids" }, withAnswer(answer));
      expect(typeof verdict.passed).toBe("boolean");
    }
    expect(jsonSchemaProblem({ type: "string", pattern: "^(a+)+$" }, `${"a".repeat(50_000)}!`)).toContain(
      "does not match",
    );
  });
});
