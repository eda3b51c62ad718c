import type { DetectorConfig } from "@cellar/shared/analysis/detector-config";
import type { ModelCall } from "./calls.ts";
import { fp, type Finding } from "./detectors.ts";
import { followedAnchor, injectionInContent, type InjectionHit } from "./injection.ts";
import { contentText, type TranscriptItem } from "./transcript.ts";

interface Pending {
  item: TranscriptItem;
  hit: InjectionHit;
}

/**
 * The `prompt_injection` detector over a session: fed every transcript item (tool results are
 * scanned as they are discovered) and then the model calls of the same trace, the first of which
 * at or after the result is the turn that read it. A finding is `high`; `critical` when that turn
 * followed the instruction (injection.ts, followedAnchor). Memory: the pending hits of the current
 * trace (no text beyond the hit's sentence and anchors), at most `maxPerSession` findings.
 */
export class InjectionDetector {
  private pending: Pending[] = [];
  private count = 0;
  constructor(private readonly config: DetectorConfig["prompt_injection"]) {}

  add(item: TranscriptItem): void {
    if (!this.config.enabled || item.type !== "tool_result" || this.count >= this.config.maxPerSession) return;
    const text =
      contentText(item.content) ||
      (item.content && typeof item.content === "object" ? JSON.stringify(item.content) : "");
    const hit = injectionInContent(text, Math.max(1, this.config.scanChars));
    if (!hit) return;
    this.count++;
    this.pending.push({ item, hit });
  }

  /** Findings of the pending hits, judged against the calls that came next (none: not followed). */
  nextTurn(calls: ModelCall[]): Finding[] {
    const out = this.pending.map(({ item, hit }) => {
      const at = Date.parse(item.timestamp);
      const next = calls.find((c) => c.at.getTime() >= at) ?? calls[0];
      const anchor = next
        ? followedAnchor(hit.anchors, {
            text: next.textHead,
            toolCalls: next.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
          })
        : null;
      const toolName = (item.toolName as string | null) ?? null;
      return {
        detector: "prompt_injection",
        fingerprint: fp("prompt_injection", `${toolName}:${hit.rule}`),
        severity: anchor ? "critical" : "high",
        title: anchor
          ? `Prompt injection in a tool result, followed by the model (${toolName ?? "unknown tool"})`
          : `Prompt injection in a tool result (${toolName ?? "unknown tool"})`,
        traceId: item.traceId,
        spanId: item.spanId,
        occurredAt: new Date(item.timestamp),
        evidence: {
          itemId: item.id,
          toolName,
          toolCallId: (item.toolCallId as string | null) ?? null,
          rule: hit.rule,
          language: hit.language,
          span: { path: hit.path, start: hit.start, end: hit.end },
          via: hit.via,
          text: hit.text,
          followed: anchor !== null,
          followedBy: anchor && next ? { itemId: next.itemId, traceId: next.traceId, anchor } : null,
        },
      } satisfies Finding;
    });
    this.pending = [];
    return out;
  }
}
