import { createHash } from "node:crypto";
import { canonicalJson } from "../crypto.ts";

/** One transcript item as an evaluator sees it (the lean form: long tool content cut). */
export interface EvalItem {
  type: string;
  role: string | null;
  content: string;
  toolName?: string | null;
}

export interface EvalToolCall {
  name: string | null;
  arguments: string;
  result: string | null;
}

export interface EvalFinding {
  detector: string;
  severity: string;
  title: string;
  /** The finding is in a tool result (prompt injection): the transcript carries hostile text. */
  inToolResult: boolean;
}

/**
 * What an evaluator judges (docs/evaluations.md, template variables): built from a matured
 * session's or trace's stored transcript and analysis by shared/evaluations/load.ts.
 */
export interface EvalContext {
  target: "session" | "trace";
  entityId: string;
  environment: string | null;
  models: string[];
  items: EvalItem[];
  lastUserMessage: string;
  finalAnswer: string;
  toolCalls: EvalToolCall[];
  metrics: Record<string, unknown>;
  findings: EvalFinding[];
  metadata: Record<string, string>;
  /** Mean per score name of the entity's scores (the filter's `score_below`). */
  scoreMeans: Record<string, number>;
  /** The lean transcript was cut at LEAN_TOTAL_CHARS. */
  truncated: boolean;
}

/** Characters of one tool call's input or result kept in the lean transcript. */
export const LEAN_TOOL_CHARS = 2_000;
/** Characters of the whole lean transcript handed to a judge (the rest is cut, and said so). */
export const LEAN_TOTAL_CHARS = 100_000;

export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)} [... ${text.length - max} more characters]`;
}

/** Any content as text: strings as they are, OpenAI content parts by their text, the rest as JSON. */
export function contentText(content: unknown): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) =>
        p && typeof p === "object" && typeof (p as any).text === "string" ? (p as any).text : canonicalJson(p),
      )
      .join("\n");
  return canonicalJson(content);
}

/** The lean transcript as text, one block per item (the `transcript` variable). */
export function transcriptText(items: EvalItem[]): string {
  return items
    .map((i) => {
      const who =
        i.type === "tool_call"
          ? `tool call ${i.toolName ?? "?"}`
          : i.type === "tool_result"
            ? `tool result ${i.toolName ?? "?"}`
            : (i.role ?? i.type);
      return `[${who}]\n${i.content}`;
    })
    .join("\n\n");
}

/**
 * The hash that says whether a transcript changed: over the lean items' types, roles, tool names
 * and contents (not times, not ids), so a re-maturation that added nothing hashes the same and is
 * not judged again; a new turn changes it.
 */
export function transcriptHash(items: EvalItem[]): string {
  const h = createHash("sha256");
  for (const i of items) h.update(canonicalJson([i.type, i.role, i.toolName ?? null, i.content])).update("\n");
  return h.digest("hex").slice(0, 32);
}
