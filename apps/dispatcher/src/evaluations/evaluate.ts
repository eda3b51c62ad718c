import type postgres from "postgres";
import type { SecretBox } from "@cellar/shared/crypto";
import type { EvalContext } from "@cellar/shared/evaluations/context";
import { runCheck } from "@cellar/shared/evaluations/checks";
import { buildPrompt, parseAnswer } from "@cellar/shared/evaluations/prompt";
import type { EvaluatorRow } from "@cellar/shared/evaluations/store";
import { loadPriceBooks } from "@cellar/shared/pricing/tenant";
import { callJudge, type JudgeDeps } from "./judge.ts";
import { whileTransient } from "./persist.ts";

/** Calls of one delivery when the judge's answer does not fit the output kind (then: failed). */
export const ANSWER_ATTEMPTS = 3;

/**
 * What evaluating one entity with one evaluator came to: a verdict to record (scored or failed),
 * a transient failure to retry later, or the judge refused the key (the caller pauses it).
 */
export type EvaluatorOutcome =
  | {
      kind: "verdict";
      status: "scored" | "failed";
      value: number | boolean | string | null;
      reason: string | null;
      error: string | null;
      inputTokens: number | null;
      outputTokens: number | null;
      costUsd: number | null;
    }
  | { kind: "retry"; error: string; retryAfterMs: number | null }
  | { kind: "auth"; error: string };

export interface EvaluateDeps {
  sql: postgres.Sql;
  secretBox: SecretBox;
  judge: JudgeDeps;
}

/**
 * One evaluator on one loaded entity: a check runs here (pure, no I/O); a judge is called with
 * the prompt (instructions apart from the data block), its answer checked against the output
 * kind and asked again up to ANSWER_ATTEMPTS times when it does not fit; tokens of every call
 * are counted and priced with the tenant's price book.
 */
export async function evaluateOne(deps: EvaluateDeps, e: EvaluatorRow, ctx: EvalContext): Promise<EvaluatorOutcome> {
  const d = e.definition;
  if (d.check) {
    const v = runCheck(d.check, ctx);
    return {
      kind: "verdict",
      status: "scored",
      value: v.passed,
      reason: v.reason,
      error: null,
      inputTokens: null,
      outputTokens: null,
      costUsd: null,
    };
  }
  const judge = d.judge!;
  const key = e.key_encrypted ? await deps.secretBox.open(e.key_encrypted, e.id) : null;
  const prompt = buildPrompt(judge.prompt, ctx, d.output);
  let inputTokens: number | null = null;
  let outputTokens: number | null = null;
  const add = (i: number | null | undefined, o: number | null | undefined) => {
    if (typeof i === "number") inputTokens = (inputTokens ?? 0) + i;
    if (typeof o === "number") outputTokens = (outputTokens ?? 0) + o;
  };
  let problem = "";
  for (let attempt = 1; attempt <= ANSWER_ATTEMPTS; attempt++) {
    const out = await callJudge(deps.judge, judge, key, prompt, d.output);
    if (out.kind === "retry") {
      // Tokens of an answer already paid for are not lost when a later call fails transiently:
      // a retry of the whole delivery recounts from zero, so only whole evaluations are priced.
      return { kind: "retry", error: out.error, retryAfterMs: out.retryAfterMs };
    }
    if (out.kind === "auth") return { kind: "auth", error: out.error };
    if (out.kind === "fail")
      return await verdictOf(
        deps,
        e,
        { status: "failed", value: null, reason: null, error: out.error },
        inputTokens,
        outputTokens,
      );
    add(out.inputTokens, out.outputTokens);
    const parsed = parseAnswer(d.output, out.answer);
    if (parsed.ok)
      return await verdictOf(
        deps,
        e,
        { status: "scored", value: parsed.value, reason: parsed.reason, error: null },
        inputTokens,
        outputTokens,
      );
    problem = parsed.problem;
  }
  return await verdictOf(
    deps,
    e,
    {
      status: "failed",
      value: null,
      reason: null,
      error: `the judge's answer does not fit the output kind after ${ANSWER_ATTEMPTS} calls: ${problem}`,
    },
    inputTokens,
    outputTokens,
  );
}

async function verdictOf(
  deps: EvaluateDeps,
  e: EvaluatorRow,
  v: {
    status: "scored" | "failed";
    value: number | boolean | string | null;
    reason: string | null;
    error: string | null;
  },
  inputTokens: number | null,
  outputTokens: number | null,
): Promise<EvaluatorOutcome> {
  let costUsd: number | null = null;
  if (inputTokens !== null || outputTokens !== null) {
    // After the judge answered: Postgres away waits here rather than losing the paid-for answer.
    const book = (await whileTransient(() => loadPriceBooks(deps.sql, [e.tenant_id])))(e.tenant_id);
    costUsd = book.costOf(e.definition.judge!.model, {
      promptTokens: inputTokens ?? 0,
      completionTokens: outputTokens ?? 0,
      cachedTokens: 0,
    });
  }
  return { kind: "verdict", ...v, inputTokens, outputTokens, costUsd };
}

/** A verdict to record: the outcome's own, or a failure carrying `error` (a retry given up, a refused key). */
export function verdictOrFailure(out: EvaluatorOutcome, error: string): Extract<EvaluatorOutcome, { kind: "verdict" }> {
  if (out.kind === "verdict") return out;
  return {
    kind: "verdict",
    status: "failed",
    value: null,
    reason: null,
    error,
    inputTokens: null,
    outputTokens: null,
    costUsd: null,
  };
}
