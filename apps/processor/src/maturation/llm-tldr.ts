import type { Logger } from "@cellar/shared/logger";
import type { TldrFacts } from "../analysis/tldr.ts";

export interface SummaryLlm {
  /** OpenAI-compatible base URL (`.../v1`) or full `.../chat/completions` URL. */
  url: string;
  apiKey: string;
  model: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/**
 * AI-written TL;DR through an OpenAI-compatible chat endpoint. Null on any failure (HTTP error,
 * timeout, empty answer), so the caller keeps the extractive one.
 */
export async function llmTldr(
  llm: SummaryLlm,
  f: TldrFacts,
  extractive: string,
  logger: Logger,
): Promise<string | null> {
  const url = /\/chat\/completions\/?$/.test(llm.url) ? llm.url : `${llm.url.replace(/\/+$/, "")}/chat/completions`;
  try {
    const res = await (llm.fetch ?? fetch)(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${llm.apiKey}` },
      body: JSON.stringify({
        model: llm.model,
        temperature: 0,
        max_tokens: 200,
        messages: [
          {
            role: "system",
            content:
              "Summarize this AI assistant session in at most 3 short sentences: what the user wanted, what happened (tools, problems), and how it ended. Plain text.",
          },
          { role: "user", content: `Facts: ${extractive}\n\nTranscript:\n${f.condensed}` },
        ],
      }),
      signal: AbortSignal.timeout(llm.timeoutMs ?? 10_000),
    });
    if (!res.ok) throw new Error(`summary endpoint answered ${res.status}`);
    const body = (await res.json()) as any;
    const text = body?.choices?.[0]?.message?.content;
    if (typeof text !== "string" || !text.trim()) throw new Error("summary endpoint returned no text");
    return text.trim().slice(0, 2_000);
  } catch (err) {
    logger.warn("AI summary failed; keeping the extractive TL;DR", { err: err as Error });
    return null;
  }
}
