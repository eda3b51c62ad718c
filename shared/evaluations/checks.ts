import type { CheckSpec } from "./definition.ts";
import type { EvalContext } from "./context.ts";
import { jsonSchemaProblem } from "./json-schema.ts";
import { compilePattern } from "./safe-pattern.ts";

/** A deterministic check's verdict: passed or not, and why (the score's comment). */
export interface CheckVerdict {
  passed: boolean;
  reason: string;
}

/** Characters of the final answer a pattern is run on (with RE2's linear matching, a bound on its work). */
export const PATTERN_INPUT_CHARS = 100_000;

/** Runs a deterministic check on the final answer (pure, docs/evaluations.md "Checks"). */
export function runCheck(check: CheckSpec, ctx: EvalContext): CheckVerdict {
  const answer = ctx.finalAnswer;
  switch (check.type) {
    case "json_schema": {
      let parsed: unknown;
      try {
        parsed = JSON.parse(stripFence(answer));
      } catch {
        return { passed: false, reason: "the final answer is not valid JSON" };
      }
      const problem = jsonSchemaProblem(check.schema, parsed);
      return problem
        ? { passed: false, reason: `the final answer does not fit the schema (${problem})` }
        : { passed: true, reason: "the final answer is valid JSON for the schema" };
    }
    case "pattern": {
      const re = compilePattern(check.pattern, check.flags ?? "");
      const found = re.test(answer.slice(0, PATTERN_INPUT_CHARS));
      const passed = check.mode === "matches" ? found : !found;
      return {
        passed,
        reason: found
          ? `the final answer matches /${check.pattern}/`
          : `the final answer does not match /${check.pattern}/`,
      };
    }
    case "length": {
      const n = [...answer].length;
      if (check.min !== undefined && n < check.min)
        return { passed: false, reason: `the final answer has ${n} characters, fewer than ${check.min}` };
      if (check.max !== undefined && n > check.max)
        return { passed: false, reason: `the final answer has ${n} characters, more than ${check.max}` };
      return { passed: true, reason: `the final answer has ${n} characters, within bounds` };
    }
    case "cites_tool_result": {
      const min = check.min_chars ?? 12;
      const results = ctx.toolCalls.map((c) => c.result).filter((r): r is string => !!r && r.length >= min);
      if (results.length === 0) return { passed: false, reason: "no tool result to cite" };
      const cited = results.find((r) => sharesRun(normal(answer), normal(r), min));
      return cited
        ? { passed: true, reason: `the final answer cites a tool result (a run of at least ${min} characters)` }
        : { passed: false, reason: `the final answer shares no run of ${min} characters with any tool result` };
    }
  }
}

/** A ```json fenced answer is read as its content. */
function stripFence(text: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return m ? m[1] : text;
}

const normal = (s: string) => s.toLowerCase().replace(/\s+/g, " ");

/** True when `a` and `b` share a substring of `min` characters (windows of `b` looked up in `a`). */
function sharesRun(a: string, b: string, min: number): boolean {
  if (a.length < min) return false;
  const windows = new Set<string>();
  for (let i = 0; i + min <= a.length && windows.size < 200_000; i++) windows.add(a.slice(i, i + min));
  for (let i = 0; i + min <= b.length; i++) if (windows.has(b.slice(i, i + min))) return true;
  return false;
}
