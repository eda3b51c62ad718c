import type { Finding } from "./detectors.ts";
import { contentText, type TranscriptItem } from "./transcript.ts";

export interface TldrFacts {
  firstUser: string | null;
  lastAssistant: { text: string; finishReason: string | null } | null;
  tools: string[];
  turns: number;
  modelCalls: number;
  toolCalls: number;
  totalTokens: number;
  costUsd: number | null;
  findingTitles: string[];
  /** Short lines of the transcript, head and tail kept (CondensedTranscript); "" when not asked for (session.ts). */
  condensed: string;
}

/** Whitespace that `oneLine` would change: a run, a non-space whitespace, or at either end. */
const UNFLAT = /\s\s|[^\S ]|^\s|\s$/;

/**
 * The text on one line (whitespace runs as one space, trimmed), cut to `max` with an ellipsis.
 * It runs for every transcript item of every maturation, so it reads only the head a long text
 * can show (flattening a prefix gives a prefix of the flattened text) and skips the rewrite when
 * there is nothing to flatten: the same result as flattening the whole text.
 */
export const oneLine = (text: string, max: number) => {
  if (text.length > 2 * max) {
    const head = text
      .slice(0, 2 * max)
      .replace(/\s+/g, " ")
      .trimStart();
    if (head.trimEnd().length > max) return `${head.slice(0, max - 1)}…`;
  }
  const flat = UNFLAT.test(text) ? text.replace(/\s+/g, " ").trim() : text;
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Deterministic summary from the transcript: what the user asked, what happened, how it ended, with numbers. */
export function extractiveTldr(f: TldrFacts): string {
  const parts: string[] = [];
  parts.push(f.firstUser ? `User asked: "${oneLine(f.firstUser, 160)}".` : "No user message.");
  let happened = `${plural(f.turns, "turn")}, ${plural(f.modelCalls, "model call")}, ${plural(f.toolCalls, "tool call")}`;
  if (f.tools.length) happened += ` (${f.tools.slice(0, 5).join(", ")}${f.tools.length > 5 ? ", …" : ""})`;
  happened += `, ${f.totalTokens} tokens`;
  happened += f.costUsd === null ? ", cost unknown." : `, $${f.costUsd.toFixed(4)}.`;
  parts.push(happened);
  if (f.lastAssistant) {
    const reason = f.lastAssistant.finishReason ? ` (${f.lastAssistant.finishReason})` : "";
    parts.push(`Ended with: "${oneLine(f.lastAssistant.text, 160)}"${reason}.`);
  } else {
    parts.push("No assistant answer.");
  }
  if (f.findingTitles.length) {
    const titles = [...new Set(f.findingTitles)];
    parts.push(
      `${plural(f.findingTitles.length, "problem")}: ${titles.slice(0, 3).join("; ")}${titles.length > 3 ? "; …" : ""}.`,
    );
  }
  return parts.join(" ");
}

/** One short line per item, for the summarizer. */
export function condensedLine(i: TranscriptItem): string {
  if (i.type === "tool_call") return `tool_call ${i.toolName}(${oneLine(String(i.content ?? ""), 200)})`;
  if (i.type === "tool_result")
    return `tool_result ${i.toolName ?? ""}: ${oneLine(contentText(i.content) || JSON.stringify(i.content ?? ""), 300)}`;
  if (i.type === "event") return `event ${i.name} severity=${i.severityNumber ?? "-"}`;
  return `${i.type}: ${oneLine(contentText(i.content), 500)}`;
}

/** Keeps the first and last `half` characters of a stream of lines (bounded, for the summarizer). */
export class CondensedTranscript {
  private head: string[] = [];
  private headChars = 0;
  private tail: string[] = [];
  private tailChars = 0;
  private skipped = false;
  constructor(private half = 6_000) {}
  add(line: string): void {
    if (this.headChars + line.length + 1 <= this.half && this.tail.length === 0) {
      this.head.push(line);
      this.headChars += line.length + 1;
      return;
    }
    this.tail.push(line);
    this.tailChars += line.length + 1;
    while (this.tailChars > this.half && this.tail.length > 1) {
      this.tailChars -= this.tail.shift()!.length + 1;
      this.skipped = true;
    }
  }
  text(): string {
    return [...this.head, ...(this.skipped ? ["…"] : []), ...this.tail].join("\n");
  }
}
