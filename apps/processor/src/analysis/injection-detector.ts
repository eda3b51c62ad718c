import type { DetectorConfig } from "@cellar/shared/analysis/detector-config";
import type { ModelCall } from "./calls.ts";
import { fp, type Finding } from "./detectors.ts";
import { followedAnchor, injectionInContent, type InjectionHit } from "./injection.ts";
import { caesarShift } from "./injection-views.ts";
import { contentText, type EventInput, eventItemId, type TranscriptItem } from "./transcript.ts";

/** What the injection was read in: a tool result item, or a tool event (an OTLP execute_tool span). */
interface Source {
  id: string;
  traceId: string | null;
  spanId: string | null;
  timestamp: string;
  toolName: string | null;
  toolCallId: string | null;
}
interface Pending {
  item: Source;
  hit: InjectionHit;
}

/** Attributes where a tool event carries what the tool returned (OTLP execute_tool spans, OpenInference TOOL spans). */
const TOOL_OUTPUT_KEYS = [
  "gen_ai.tool.call.result",
  "output.value",
  "gen_ai.tool.output",
  "tool.output",
  "tool.result",
];
/** A cheap first look: a tool output without any of these is not scanned (most API answers). */
/** The keyword prefilter: a text it passes is scanned (exported for the development-case test). */
export const PREFILTER = new RegExp(
  [
    String.raw`ignor|disregard|forget|overrid|bypass|instruc|inst\]|<<sys|<\||prompt|system|root|tool|mode`,
    String.raw`assist|asist|agent|\bai\b|\bia\b|\bki\b|llm|gpt|claude|copilot|gemini|bot|model|developer|admin`,
    String.raw`secret|password|token|credential|\bkey|environ|conversation|history|user|\byou|permission|confirm`,
    String.raw`silent|quiet|covert|dear|note|attention|important|<!--|\]\(|\balt\s*=|title\s*=|aria-label`,
    String.raw`[^\x00-\x7f]|[A-Za-z0-9+/_-]{24}|vtabe|qvfertneq|vafgehpg|nffvfgnag|flfgrz|erirny`,
    // injection-implicit.ts: reply instructions, reworded overrides, plain agent commands, end markers.
    // injection-tasks.ts: code offered for the answer, internal addresses, scripted answers.
    String.raw`stop everything|following code|subsequent code|code (?:block|snippet|excerpt|section)|internal|intranet|169\.254|questioned|if asked`,
    // injection-reader.ts and injection-asks.ts: reworded overrides, identity claims, asks; "\x49\x67" hex.
    String.raw`overlook|directiv|\bgod\b|gott|\bdio\b|dios|deus|dieu|\\x[0-9a-f]{2}\\x|kalimut|balewal|pansin|tagubilin|abaikan|lupakan|instruksi|perintah|negeer|vergeet|zignoruj|zapomnij`,
    String.raw`imagine|suppose|pretend|hypothetic|phishing|decode|decrypt|execute|cipher|revers|emoji|\[data\]`,
    // injection-disguised.ts: the frames of a disguised instruction.
    String.raw`world|universe|reality|scenario|purpose of|sake of|make (?:this|it|the)|challenge|authority|expert|practice to`,
    String.raw`from now on|summari|instead of|\binitiate|\bdeposit|new task|end of|<\/|\bgrant|\bunlock|\bsell|\bbuy|\btransfer|\bwire\b|\bdelete|\bremove|\berase|\bwipe|\bmove|\bcopy|\bupload|\bforward|\bshare|\bsend`,
  ].join("|"),
  "i",
);

/**
 * Hex byte pairs apart ("49 67 6e 6f ..."): its own pattern, because inside PREFILTER's
 * alternation this one alternative made the whole pass 20x slower on JSON full of digits
 * (bench/text-matching.ts, "tool outputs").
 */
const HEX_PAIRS = /(?:[0-9a-f]{2}[ :]){6}/i;
/** Eight-bit binary groups and Morse symbols (injection-views.ts), each its own pattern for the same reason. */
const BINARY_GROUPS = /(?:[01]{8} ){4}/;
const MORSE_SYMBOLS = /(?:[.-]{1,6} (?:\/ )?){8}/;
/** Words the prefilter looks at for a Caesar-shifted trigger (the view itself looks at 4,096). */
const PREFILTER_CAESAR_WORDS = 1_024;
/**
 * The keyword prefilter: a text it passes is scanned (the development-case tests use it too). A
 * Caesar-shifted trigger word has no keyword; the word pass that finds one runs last, on text
 * nothing else passed.
 */
export const passesPrefilter = (text: string) =>
  PREFILTER.test(text) ||
  HEX_PAIRS.test(text) ||
  // Plain substring looks first (a regex pass over every position costs more than the search).
  (text.includes("01") && BINARY_GROUPS.test(text)) ||
  ((text.includes(".-") || text.includes("-.")) && MORSE_SYMBOLS.test(text)) ||
  caesarShift(text, PREFILTER_CAESAR_WORDS) !== 0;

const text = (v: unknown): string => (typeof v === "string" ? v : v && typeof v === "object" ? JSON.stringify(v) : "");

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
  /** Tool call ids already flagged: a result seen both as a tool event and as a tool message counts once. */
  private flagged = new Set<string>();
  constructor(private readonly config: DetectorConfig["prompt_injection"]) {}

  add(item: TranscriptItem): void {
    if (item.type !== "tool_result") return;
    const toolCallId = (item.toolCallId as string | null) ?? null;
    this.scan(
      {
        id: item.id,
        traceId: item.traceId,
        spanId: item.spanId,
        timestamp: item.timestamp,
        toolName: (item.toolName as string | null) ?? null,
        toolCallId,
      },
      contentText(item.content) || text(item.content),
    );
  }

  /**
   * Tool events: an OTLP `execute_tool` span (mapped to the event `gen_ai.execute_tool`) or any
   * event named for a tool that carries the tool's output; scanned only past a keyword prefilter.
   */
  addEvent(e: EventInput): void {
    if (!/tool/i.test(e.name)) return;
    const a = e.attributes ?? {};
    const key = TOOL_OUTPUT_KEYS.find((k) => a[k] !== undefined && a[k] !== null);
    const output = key ? text(a[key]) : e.body ? text(e.body.result ?? e.body.output ?? e.body.content ?? null) : "";
    if (!output) return;
    this.scan(
      {
        id: eventItemId(e.id),
        traceId: e.traceId,
        spanId: typeof a["otel.span_id"] === "string" ? (a["otel.span_id"] as string) : null,
        timestamp: e.timestamp.toISOString(),
        toolName: typeof a["gen_ai.tool.name"] === "string" ? (a["gen_ai.tool.name"] as string) : null,
        toolCallId: typeof a["gen_ai.tool.call.id"] === "string" ? (a["gen_ai.tool.call.id"] as string) : null,
      },
      output,
    );
  }

  private scan(source: Source, content: string): void {
    if (!this.config.enabled || this.count >= this.config.maxPerSession || !content) return;
    if (source.toolCallId && this.flagged.has(source.toolCallId)) return;
    const head =
      content.length > this.config.scanChars ? content.slice(0, Math.max(1, this.config.scanChars)) : content;
    if (!passesPrefilter(head)) return;
    const hit = injectionInContent(content, Math.max(1, this.config.scanChars));
    if (!hit) return;
    this.count++;
    if (source.toolCallId) this.flagged.add(source.toolCallId);
    this.pending.push({ item: source, hit });
  }

  /** Findings of the pending hits, judged against the calls that came next (none: not followed). */
  nextTurn(calls: ModelCall[]): Finding[] {
    const out = this.judge(calls);
    this.pending = [];
    return out;
  }

  /** The pending results judged against `calls`, left pending (a session's end that may not be its last). */
  judge(calls: ModelCall[]): Finding[] {
    return this.pending.map(({ item, hit }) => {
      const at = Date.parse(item.timestamp);
      const next = calls.find((c) => c.at.getTime() >= at) ?? calls[0];
      const anchor = next
        ? followedAnchor(hit.anchors, {
            text: next.textHead,
            toolCalls: next.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
          })
        : null;
      const toolName = item.toolName;
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
          toolCallId: item.toolCallId,
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
  }
}
