import { Type, type Static } from "@sinclair/typebox";
import { compilePattern } from "./safe-pattern.ts";

/**
 * What an evaluator is (docs/evaluations.md): the body of POST /evaluators (PUT takes the same
 * fields, each optional, and makes a new version). Exactly one of `judge` (a model asked for a
 * structured verdict) or `check` (deterministic, no model); a check's output is a boolean.
 */
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: "^[^\\u0000-\\u001f\\u007f]*$" });
const Finite = (min = -1e15, max = 1e15) => Type.Number({ minimum: min, maximum: max });

/** What the judge must answer, beside a reason: a number in a range, a boolean, or one of the labels. */
export const EvaluatorOutput = Type.Union([
  Type.Object({ kind: Type.Literal("number"), min: Finite(), max: Finite() }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal("boolean") }, { additionalProperties: false }),
  Type.Object(
    {
      kind: Type.Literal("label"),
      labels: Type.Array(Text(128), { minItems: 2, maxItems: 50, uniqueItems: true }),
    },
    { additionalProperties: false },
  ),
]);
export type EvaluatorOutput = Static<typeof EvaluatorOutput>;

export const JUDGE_PROVIDERS = ["openai", "anthropic"] as const;

/** A model judge: an OpenAI-compatible chat endpoint or Anthropic's messages API. */
export const JudgeSpec = Type.Object(
  {
    provider: Type.Union(JUDGE_PROVIDERS.map((p) => Type.Literal(p))),
    /** The full endpoint URL (…/v1/chat/completions or …/v1/messages): HTTPS and public unless allow-listed. */
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    model: Text(256),
    /** The template of the instructions (docs/evaluations.md, template variables); the transcript goes apart. */
    prompt: Type.String({ minLength: 1, maxLength: 20_000 }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 16, maximum: 8192 })),
    timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 120 })),
  },
  { additionalProperties: false },
);
export type JudgeSpec = Static<typeof JudgeSpec>;

/** Deterministic checks, over the final answer (the last assistant message) unless said otherwise. */
export const CheckSpec = Type.Union([
  Type.Object(
    // A subset of JSON Schema (shared/evaluations/json-schema.ts says which keywords).
    { type: Type.Literal("json_schema"), schema: Type.Record(Type.String(), Type.Unknown()) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("pattern"),
      pattern: Type.String({ minLength: 1, maxLength: 1000 }),
      flags: Type.Optional(Type.String({ pattern: "^[imsu]{0,4}$" })),
      /** `matches`: passes when the answer matches; `avoids`: passes when it does not. */
      mode: Type.Union([Type.Literal("matches"), Type.Literal("avoids")]),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("length"),
      min: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
      max: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("cites_tool_result"),
      /** A run of at least this many characters of a tool result must appear in the answer (default 12). */
      min_chars: Type.Optional(Type.Integer({ minimum: 3, maximum: 1000 })),
    },
    { additionalProperties: false },
  ),
]);
export type CheckSpec = Static<typeof CheckSpec>;

/** Which matured sessions or traces an evaluator looks at; every given condition must hold. */
export const EvaluatorFilter = Type.Object(
  {
    environment: Type.Optional(Type.Array(Text(128), { minItems: 1, maxItems: 20 })),
    model: Type.Optional(Type.Array(Text(256), { minItems: 1, maxItems: 20 })),
    has_findings: Type.Optional(Type.Boolean()),
    /** Only entities with a score of this name whose mean is below `value`. */
    score_below: Type.Optional(Type.Object({ name: Text(128), value: Finite() }, { additionalProperties: false })),
    /** Every key must be present in the request metadata with this value (string compare). */
    metadata: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.String({ maxLength: 512 })),
    ),
  },
  { additionalProperties: false },
);
export type EvaluatorFilter = Static<typeof EvaluatorFilter>;

/** The fields every version carries (stored as `evaluators.definition`, without the key). */
const fields = {
  target: Type.Optional(Type.Union([Type.Literal("session"), Type.Literal("trace")])),
  judge: Type.Optional(JudgeSpec),
  check: Type.Optional(CheckSpec),
  output: Type.Optional(EvaluatorOutput),
  filter: Type.Optional(EvaluatorFilter),
  /** Share of matching entities judged (0-1, default 1): by a hash of the entity, so stable. */
  sampling_rate: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  /** USD per UTC day; past it the evaluator stops until the next day (null: no limit). */
  daily_budget_usd: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1e6 }), Type.Null()])),
  /** Review queue: a judged session whose score is below this goes to review (numbers; false for booleans). */
  review_below: Type.Optional(Type.Union([Finite(), Type.Null()])),
};

export const EvaluatorCreate = Type.Object(
  {
    service_name: Text(200),
    name: Text(128),
    ...fields,
    /** The judge's API key (write-only: sealed at rest, never returned). */
    api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** `paused`: created without judging anything live (try it first with a run). */
    status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("paused")])),
  },
  { additionalProperties: false },
);
export type EvaluatorCreate = Static<typeof EvaluatorCreate>;

export const EvaluatorUpdate = Type.Object(
  {
    ...fields,
    api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** `paused` stops it; `active` resumes it (also after a key or budget pause). */
    status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("paused")])),
  },
  { additionalProperties: false },
);
export type EvaluatorUpdate = Static<typeof EvaluatorUpdate>;

/** A version's definition as stored and as the runner reads it (defaults applied). */
export interface EvaluatorDefinition {
  target: "session" | "trace";
  judge?: JudgeSpec;
  check?: CheckSpec;
  output: EvaluatorOutput;
  filter: EvaluatorFilter;
  sampling_rate: number;
  daily_budget_usd: number | null;
  review_below: number | null;
}

/** The stored definition of a create or of an update over the current one; or a problem ("invalid <field>: ..."). */
export function buildDefinition(
  input: Partial<EvaluatorDefinition> & { check?: CheckSpec; judge?: JudgeSpec },
  current?: EvaluatorDefinition,
): EvaluatorDefinition | string {
  const merged = { ...current, ...stripUndefined(input) } as Partial<EvaluatorDefinition>;
  // A check replaces a judge and the other way round.
  if (input.check) delete merged.judge;
  if (input.judge) delete merged.check;
  if (!merged.judge && !merged.check) return "invalid judge: an evaluator needs a judge or a check";
  if (merged.judge && merged.check) return "invalid check: give a judge or a check, not both";
  const output: EvaluatorOutput | undefined = merged.check ? { kind: "boolean" } : merged.output;
  if (merged.check && input.output && input.output.kind !== "boolean")
    return "invalid output: a check answers a boolean";
  if (!output) return "invalid output: a judge needs an output kind (number, boolean or label)";
  if (output.kind === "number" && output.min >= output.max) return "invalid output.min: must be below output.max";
  if (merged.check?.type === "pattern") {
    try {
      compilePattern(merged.check.pattern, merged.check.flags ?? "");
    } catch (err) {
      return `invalid check.pattern: ${(err as Error).message}`;
    }
  }
  if (merged.check?.type === "length") {
    const { min, max } = merged.check;
    if (min === undefined && max === undefined) return "invalid check.min: give min, max or both";
    if (min !== undefined && max !== undefined && min > max) return "invalid check.min: must not be above max";
  }
  if (merged.judge) {
    const problem = templateProblem(merged.judge.prompt);
    if (problem) return `invalid judge.prompt: ${problem}`;
  }
  return {
    target: merged.target ?? "session",
    ...(merged.judge ? { judge: merged.judge } : {}),
    ...(merged.check ? { check: merged.check } : {}),
    output,
    filter: merged.filter ?? {},
    sampling_rate: merged.sampling_rate ?? 1,
    daily_budget_usd: merged.daily_budget_usd ?? null,
    review_below: merged.review_below ?? null,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The variables a prompt template may name as `{{name}}` (docs/evaluations.md). */
export const TEMPLATE_VARIABLES = [
  "transcript",
  "last_user_message",
  "final_answer",
  "tool_calls",
  "metrics",
  "findings",
  "metadata",
  "output_instructions",
] as const;

/** An unknown `{{variable}}` in a template, or null. */
export function templateProblem(template: string): string | null {
  for (const m of template.matchAll(/\{\{\s*([^}]*?)\s*\}\}/g))
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(m[1]))
      return `unknown variable {{${m[1]}}} (known: ${TEMPLATE_VARIABLES.join(", ")})`;
  return null;
}
