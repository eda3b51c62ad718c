import type { Logger } from "@cellar/shared/logger";
import type { Finding } from "./detectors";
import { contentText, type TranscriptItem } from "./transcript";

export interface SummaryLlm {
  /** OpenAI-compatible base URL (`.../v1`) or full `.../chat/completions` URL. */
  url: string;
  apiKey: string;
  model: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface TldrFacts {
  items: TranscriptItem[];
  turns: number;
  modelCalls: number;
  toolCalls: number;
  totalTokens: number;
  costUsd: number | null;
  findings: Finding[];
}

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Deterministic summary from the transcript: what the user asked, what happened, how it ended, with numbers. */
export function extractiveTldr(f: TldrFacts): string {
  const firstUser = f.items.find((i) => i.type === "user" && contentText(i.content).trim());
  const lastAssistant = [...f.items].reverse().find((i) => i.type === "assistant" && contentText(i.content).trim());
  const tools = [...new Set(f.items.filter((i) => i.type === "tool_call").map((i) => String(i.toolName ?? "unknown")))];
  const parts: string[] = [];
  parts.push(firstUser ? `User asked: "${oneLine(contentText(firstUser.content), 160)}".` : "No user message.");
  let happened = `${plural(f.turns, "turn")}, ${plural(f.modelCalls, "model call")}, ${plural(f.toolCalls, "tool call")}`;
  if (tools.length) happened += ` (${tools.slice(0, 5).join(", ")}${tools.length > 5 ? ", …" : ""})`;
  happened += `, ${f.totalTokens} tokens`;
  happened += f.costUsd === null ? ", cost unknown." : `, $${f.costUsd.toFixed(4)}.`;
  parts.push(happened);
  if (lastAssistant) {
    const reason = typeof lastAssistant.finishReason === "string" ? ` (${lastAssistant.finishReason})` : "";
    parts.push(`Ended with: "${oneLine(contentText(lastAssistant.content), 160)}"${reason}.`);
  } else {
    parts.push("No assistant answer.");
  }
  if (f.findings.length) {
    const titles = [...new Set(f.findings.map((x) => x.title))];
    parts.push(`${plural(f.findings.length, "problem")}: ${titles.slice(0, 3).join("; ")}${titles.length > 3 ? "; …" : ""}.`);
  }
  return parts.join(" ");
}

/** The transcript as short lines for the summarizer, head and tail kept when long. */
export function condensedTranscript(items: TranscriptItem[], maxChars = 12_000): string {
  const lines = items.map((i) => {
    if (i.type === "tool_call") return `tool_call ${i.toolName}(${oneLine(String(i.content ?? ""), 200)})`;
    if (i.type === "tool_result") return `tool_result ${i.toolName ?? ""}: ${oneLine(contentText(i.content) || JSON.stringify(i.content ?? ""), 300)}`;
    if (i.type === "event") return `event ${i.name} severity=${i.severityNumber ?? "-"}`;
    return `${i.type}: ${oneLine(contentText(i.content), 500)}`;
  });
  const all = lines.join("\n");
  if (all.length <= maxChars) return all;
  const half = Math.floor(maxChars / 2);
  return `${all.slice(0, half)}\n…\n${all.slice(-half)}`;
}

/**
 * AI-written TL;DR through an OpenAI-compatible chat endpoint. Null on any failure (HTTP error,
 * timeout, empty answer), so the caller keeps the extractive one.
 */
export async function llmTldr(llm: SummaryLlm, f: TldrFacts, extractive: string, logger: Logger): Promise<string | null> {
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
          { role: "system", content: "Summarize this AI assistant session in at most 3 short sentences: what the user wanted, what happened (tools, problems), and how it ended. Plain text." },
          { role: "user", content: `Facts: ${extractive}\n\nTranscript:\n${condensedTranscript(f.items)}` },
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
