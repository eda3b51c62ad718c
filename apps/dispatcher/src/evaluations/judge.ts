import { readCapped } from "@cellar/shared/read-capped";
import type { Cidr } from "@cellar/shared/webhooks/address";
import { checkDestination, type DestinationCheck, type ResolveDns } from "@cellar/shared/webhooks/destination";
import type { EvaluatorOutput, JudgeSpec } from "@cellar/shared/evaluations/definition";
import { answerSchema } from "@cellar/shared/evaluations/prompt";
import type { DeliveryFetch } from "../send.ts";
import { parseRetryAfter } from "../retry.ts";

/** The most of a judge's answer read (raw bytes, never inflated); a longer answer is a failure. */
export const JUDGE_RESPONSE_MAX_BYTES = 256 * 1024;
export const DEFAULT_JUDGE_TIMEOUT_MS = 30_000;
export const DEFAULT_JUDGE_MAX_TOKENS = 512;
/** Anthropic's messages API version this client speaks. */
export const ANTHROPIC_VERSION = "2023-06-01";
/** The tool Anthropic's judge is made to call: its input is the structured answer. */
export const ANSWER_TOOL = "record_evaluation";

export interface JudgeDeps {
  fetch: DeliveryFetch;
  resolveDns: ResolveDns;
  allowlist: Cidr[];
  literalCache?: Map<string, DestinationCheck>;
  now: () => Date;
  /** Default per-call deadline (the evaluator's timeout_seconds overrides it). */
  timeoutMs: number;
}

/**
 * What one call of a judge came to (data, never an exception, like a webhook attempt's outcome):
 * an answer (maybe not fitting the output kind: the caller checks), a transient failure to
 * retry (429, 5xx, timeout, connection), the key refused (401/403: the evaluator pauses), or a
 * permanent failure (another 4xx, a redirect, a private address, a body past the cap).
 */
export type JudgeOutcome =
  | { kind: "answer"; answer: unknown; inputTokens: number | null; outputTokens: number | null }
  | {
      kind: "retry";
      error: string;
      retryAfterMs: number | null;
      inputTokens?: number | null;
      outputTokens?: number | null;
    }
  | { kind: "auth"; error: string }
  | { kind: "fail"; error: string };

/** One structured call of a judge: the request in its provider's wire format, the answer out of it. */
export async function callJudge(
  deps: JudgeDeps,
  judge: JudgeSpec,
  key: string | null,
  prompt: { system: string; user: string },
  output: EvaluatorOutput,
): Promise<JudgeOutcome> {
  const timeoutMs = judge.timeout_seconds ? judge.timeout_seconds * 1000 : deps.timeoutMs;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const at = deps.now();
  try {
    const dest = await Promise.race([
      checkDestination(judge.url, {
        resolveDns: deps.resolveDns,
        allowlist: deps.allowlist,
        literalCache: deps.literalCache,
      }),
      new Promise<undefined>((resolve) => controller.signal.addEventListener("abort", () => resolve(undefined))),
    ]);
    if (!dest) return { kind: "retry", error: `timeout after ${timeoutMs} ms`, retryAfterMs: null };
    if (!dest.ok) {
      if (dest.problem === "dns_failure")
        return { kind: "retry", error: `judge url ${dest.message}`, retryAfterMs: null };
      return { kind: "fail", error: `judge url ${dest.message}` };
    }
    const { headers, body } = request(judge, key, prompt, output);
    const res = await deps.fetch(
      dest.url.toString(),
      { method: "POST", headers, body: JSON.stringify(body), redirect: "manual", signal: controller.signal },
      { address: dest.address, hostname: dest.hostname },
    );
    const code = res.status;
    let text: string;
    try {
      text = new TextDecoder().decode(
        await readCapped(res.body, JUDGE_RESPONSE_MAX_BYTES, () => new Error("too large")),
      );
    } catch (err) {
      if (controller.signal.aborted)
        return { kind: "retry", error: `timeout after ${timeoutMs} ms`, retryAfterMs: null };
      if ((err as Error).message === "too large")
        return { kind: "fail", error: `judge answer larger than ${JUDGE_RESPONSE_MAX_BYTES} bytes` };
      return { kind: "retry", error: "judge answer broke off", retryAfterMs: null };
    }
    if (code >= 300 && code < 400) return { kind: "fail", error: `judge answered a redirect (${code}), not followed` };
    if (code === 401 || code === 403) return { kind: "auth", error: `judge refused the key (HTTP ${code})` };
    if (code === 429 || code >= 500)
      return {
        kind: "retry",
        error: `judge HTTP ${code}`,
        retryAfterMs: parseRetryAfter(res.headers.get("retry-after"), at),
      };
    if (code < 200 || code >= 300) return { kind: "fail", error: `judge HTTP ${code}: ${text.slice(0, 200)}` };
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      return { kind: "retry", error: "judge answer is not JSON", retryAfterMs: null };
    }
    return judge.provider === "openai" ? openAiAnswer(json) : anthropicAnswer(json);
  } catch (err) {
    if (controller.signal.aborted) return { kind: "retry", error: `timeout after ${timeoutMs} ms`, retryAfterMs: null };
    const e = err as { code?: unknown; message?: unknown };
    const text = typeof e?.code === "string" && e.code ? e.code : String(e?.message ?? err);
    return {
      kind: "retry",
      error: `judge connection failed: ${text.replace(/\b\d{1,3}(\.\d{1,3}){3}\b/g, "<address>").slice(0, 200)}`,
      retryAfterMs: null,
    };
  } finally {
    clearTimeout(timer);
  }
}

function request(
  judge: JudgeSpec,
  key: string | null,
  prompt: { system: string; user: string },
  output: EvaluatorOutput,
) {
  const maxTokens = judge.max_tokens ?? DEFAULT_JUDGE_MAX_TOKENS;
  const schema = answerSchema(output);
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (judge.provider === "openai") {
    if (key) headers.authorization = `Bearer ${key}`;
    return {
      headers,
      body: {
        model: judge.model,
        messages: [
          { role: "system", content: prompt.system },
          { role: "user", content: prompt.user },
        ],
        max_tokens: maxTokens,
        ...(judge.temperature !== undefined ? { temperature: judge.temperature } : {}),
        response_format: { type: "json_schema", json_schema: { name: "evaluation", strict: true, schema } },
      },
    };
  }
  if (key) headers["x-api-key"] = key;
  headers["anthropic-version"] = ANTHROPIC_VERSION;
  return {
    headers,
    body: {
      model: judge.model,
      max_tokens: maxTokens,
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      ...(judge.temperature !== undefined ? { temperature: judge.temperature } : {}),
      tools: [{ name: ANSWER_TOOL, description: "Record the evaluation of the conversation.", input_schema: schema }],
      tool_choice: { type: "tool", name: ANSWER_TOOL },
    },
  };
}

const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : null);

/** The JSON in the first choice's content (a refusal or non-JSON content is an answer that does not fit). */
function openAiAnswer(json: any): JudgeOutcome {
  const inputTokens = count(json?.usage?.prompt_tokens);
  const outputTokens = count(json?.usage?.completion_tokens);
  const content = json?.choices?.[0]?.message?.content;
  let answer: unknown = null;
  if (typeof content === "string") {
    try {
      answer = JSON.parse(content);
    } catch {
      answer = null;
    }
  }
  return { kind: "answer", answer, inputTokens, outputTokens };
}

/** The input of the forced tool call. */
function anthropicAnswer(json: any): JudgeOutcome {
  const inputTokens = count(json?.usage?.input_tokens);
  const outputTokens = count(json?.usage?.output_tokens);
  const blocks: any[] = Array.isArray(json?.content) ? json.content : [];
  const use = blocks.find((b) => b?.type === "tool_use" && b?.name === ANSWER_TOOL);
  return { kind: "answer", answer: use?.input ?? null, inputTokens, outputTokens };
}
