import { costOfResponse } from "@cellar/shared/pricing/breakdown";
import { stableId16 } from "@cellar/shared/spans";
import { DEFAULT_PRICE_BOOK, type PriceBook } from "@cellar/shared/pricing/table";
import { REFUSAL_MAX_READ } from "./refusal.ts";
import { contentText, itemId, toolCallsOf, type ToolCallRef, type TraceInput } from "./transcript.ts";

/** Characters of a reply's text kept on a call: refusal phrasing reads replies up to this long. */
export const CALL_TEXT_HEAD = REFUSAL_MAX_READ;

/** One model response, normalized and compact (no message body): what metrics, costs and detectors use. */
export interface ModelCall {
  traceId: string;
  spanId: string;
  index: number;
  /** Response model (dated snapshot) when given, else the request's. */
  model: string | null;
  /** Price-table name, null when the table does not know the model. */
  pricedModel: string | null;
  /** Context window from the tenant's price book (custom models included), null when unknown. */
  contextWindow: number | null;
  at: Date;
  latencyMs: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  finishReason: string | null;
  /** The first CALL_TEXT_HEAD characters of the reply's text, and its full length. */
  textHead: string;
  textLength: number;
  /** `message.refusal` when set. */
  refusal: string | null;
  /** Content carried as non-text parts (audio, images): not empty. */
  nonTextContent: boolean;
  hasMessage: boolean;
  toolCalls: ToolCallRef[];
  /** Tools whose results this call consumed (new results in its request, or the 1st response's calls). */
  consumedTools: string[];
  costUsd: number | null;
  /** Why `costUsd` is null (unknown model, unpriced service tier...), else null (shared/pricing/table.ts). */
  costReason: string | null;
  /** Transcript item that shows this response (assistant text, else its first tool call). */
  itemId: string | null;
}

/**
 * Names a price book gives models, looked up once per model, book and minute: every trace of a
 * chunk names the same few models, and each lookup normalises the name and resolves it twice or
 * more (2.4% of a maturation's processor CPU, looked up per trace). The book resolves a name at
 * the current time, remembered per minute (shared/pricing/table.ts `match`): so is this.
 */
const canonicalMemo = new WeakMap<PriceBook, { minute: number; names: Map<string | null, string | null> }>();
function canonicalNames(prices: PriceBook): (name: string | null) => string | null {
  const minute = Math.floor(Date.now() / 60_000);
  let memo = canonicalMemo.get(prices);
  if (!memo || memo.minute !== minute || memo.names.size > 1_000) {
    memo = { minute, names: new Map() };
    canonicalMemo.set(prices, memo);
  }
  const names = memo.names;
  return (name) => {
    let known = names.get(name);
    if (known === undefined) names.set(name, (known = prices.canonicalModel(name)));
    return known;
  };
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * The model calls of one trace; `consumedTools` = what the transcript saw its request consume;
 * `prices`: the tenant's price book (built-in table plus its own entries, shared/pricing/tenant.ts).
 */
export function callsOfTrace(
  t: TraceInput,
  consumedTools: string[],
  prices: PriceBook = DEFAULT_PRICE_BOOK,
): ModelCall[] {
  const responses: any[] = Array.isArray(t.payload.responses) ? t.payload.responses : [];
  const startMs = t.startTime.getTime();
  const step = (t.endTime.getTime() - startMs) / Math.max(1, responses.length);
  const requestModel = typeof t.payload.request?.model === "string" ? t.payload.request.model : null;
  const provider = typeof t.payload.provider === "string" ? t.payload.provider : null;
  const canonicalOf = canonicalNames(prices);
  return responses.map((r, ri) => {
    const choice = r?.choices?.[0];
    const message = choice?.message ?? null;
    const usage = r?.usage ?? {};
    const model = typeof r?.model === "string" ? r.model : requestModel;
    const toolCalls = toolCallsOf(message);
    const consumed =
      ri === 0 ? consumedTools : toolCallsOf(responses[ri - 1]?.choices?.[0]?.message).map((c) => c.name ?? "unknown");
    const text = contentText(message?.content);
    const promptTokens = num(usage.prompt_tokens);
    const completionTokens = num(usage.completion_tokens);
    const cachedTokens = num(usage.prompt_tokens_details?.cached_tokens);
    const at = new Date(startMs + step * ri);
    const origin = `${t.traceId}:res:${ri}`;
    const firstCall = toolCalls[0];
    const pricedModel = canonicalOf(model);
    const priceModel = pricedModel ? model : requestModel;
    return {
      traceId: t.traceId,
      spanId: stableId16(t.traceId, "response", String(ri)),
      index: ri,
      model,
      pricedModel: pricedModel ?? canonicalOf(requestModel),
      contextWindow: prices.priceFor(priceModel, at, provider)?.contextWindow ?? null,
      at,
      latencyMs: Math.round(step),
      promptTokens,
      completionTokens,
      totalTokens: num(usage.total_tokens) || promptTokens + completionTokens,
      cachedTokens,
      reasoningTokens: num(usage.completion_tokens_details?.reasoning_tokens),
      // A span without output messages keeps its stop reasons on the response (shared/otlp/map.ts).
      finishReason:
        typeof choice?.finish_reason === "string"
          ? choice.finish_reason
          : typeof r?.finish_reasons?.[0] === "string"
            ? r.finish_reasons[0]
            : null,
      textHead: text.slice(0, CALL_TEXT_HEAD),
      textLength: text.length,
      refusal: typeof message?.refusal === "string" && message.refusal ? message.refusal : null,
      nonTextContent: Array.isArray(message?.content) && message.content.length > 0,
      hasMessage: Boolean(message),
      toolCalls,
      consumedTools: consumed,
      ...costOfResponse(prices, t.payload, r, priceModel, at),
      itemId: !message
        ? null
        : text.trim() || toolCalls.length === 0
          ? itemId(origin)
          : firstCall.id
            ? itemId("tool_call", firstCall.id, String(firstCall.name ?? ""))
            : itemId(origin, "call", "0"),
    };
  });
}
