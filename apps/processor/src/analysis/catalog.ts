import { createHash } from "node:crypto";
import { canonicalJson } from "@cellar/shared/crypto";
import { contentText, type TraceInput, type TranscriptItem } from "./transcript.ts";

export interface ToolSchemaSeen {
  name: string;
  schemaHash: string;
  schema: Record<string, unknown>;
  firstSeenAt: string;
  lastSeenAt: string;
}

/** Function definitions from `request.tools[].function` and legacy `request.functions`, deduplicated across the session. */
export class ToolSchemaCollector {
  private seen = new Map<string, ToolSchemaSeen>();
  add(t: TraceInput): void {
    const req = t.payload.request ?? {};
    const defs: any[] = [
      ...(Array.isArray(req.tools)
        ? req.tools.map((tool: any) => (tool?.type === "function" || tool?.function ? tool.function : null))
        : []),
      ...(Array.isArray(req.functions) ? req.functions : []),
    ].filter((d) => d && typeof d === "object" && typeof d.name === "string" && d.name);
    for (const def of defs) {
      const canonical = canonicalJson(def);
      const at = t.startTime.toISOString();
      const prior = this.seen.get(canonical);
      if (prior) {
        if (at < prior.firstSeenAt) prior.firstSeenAt = at;
        if (at > prior.lastSeenAt) prior.lastSeenAt = at;
        continue;
      }
      this.seen.set(canonical, {
        name: def.name,
        schemaHash: createHash("sha256").update(canonical).digest("hex"),
        schema: def,
        firstSeenAt: at,
        lastSeenAt: at,
      });
    }
  }
  result(): ToolSchemaSeen[] {
    return [...this.seen.values()].sort(
      (a, b) => a.name.localeCompare(b.name) || a.schemaHash.localeCompare(b.schemaHash),
    );
  }
}

export interface IntentDefinition {
  id: string;
  name: string;
  description: string;
  examples: string[];
}
export interface IntentMatch {
  intentId: string;
  name: string;
  score: number;
  evidence: { itemId: string; text: string; matched: string };
}

/** Minimum share of a phrase's words found in one user message for a match. */
export const INTENT_MATCH_THRESHOLD = 0.6;
const STOPWORDS = new Set(
  "a an the i me my we our you your it its is are was were be been to of in on at for from by with and or but not no do does did can could would should will shall may might this that these those there here please hi hello hey thanks thank just so".split(
    " ",
  ),
);

/** Words by Unicode segmentation: Thai, Chinese and Japanese write no spaces, Devanagari words hold combining marks. */
const WORDS = new Intl.Segmenter("und", { granularity: "word" });

export function intentTokens(text: string): Set<string> {
  const folded = text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .normalize("NFC");
  const words: string[] = [];
  for (const s of WORDS.segment(folded)) if (s.isWordLike) words.push(s.segment);
  return new Set(
    words
      .filter((w) => w.length > 1 && !STOPWORDS.has(w))
      .map((w) => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w)),
  );
}

/**
 * Matches user messages against intent phrases: each example phrase (or, without examples, the
 * name and the description) scores the share of its words present in one user message; the
 * best score per intent counts (the earliest message on ties), and a score >=
 * INTENT_MATCH_THRESHOLD is a match. Fed one user item at a time; keeps only the best so far.
 */
export class IntentMatcher {
  private phrases: Array<{ intent: IntentDefinition; phrase: string; want: Set<string> }>;
  private best = new Map<string, IntentMatch>();
  constructor(intents: IntentDefinition[]) {
    this.phrases = intents.flatMap((intent) => {
      const list = intent.examples.length
        ? intent.examples
        : [intent.name.replace(/[_-]+/g, " "), intent.description].filter(Boolean);
      return list.map((phrase) => ({ intent, phrase, want: intentTokens(phrase) })).filter((p) => p.want.size > 0);
    });
  }
  add(item: TranscriptItem): void {
    if (item.type !== "user" || this.phrases.length === 0) return;
    const text = contentText(item.content);
    const tokens = intentTokens(text);
    for (const { intent, phrase, want } of this.phrases) {
      let hit = 0;
      for (const w of want) if (tokens.has(w)) hit++;
      const score = Math.round((hit / want.size) * 1000) / 1000;
      const prior = this.best.get(intent.id);
      if (score >= INTENT_MATCH_THRESHOLD && (!prior || score > prior.score)) {
        this.best.set(intent.id, {
          intentId: intent.id,
          name: intent.name,
          score,
          evidence: { itemId: item.id, text: text.slice(0, 200), matched: phrase },
        });
      }
    }
  }
  result(): IntentMatch[] {
    return [...this.best.values()].sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  }
}

/** Whole-list form (tests). */
export function matchIntents(items: TranscriptItem[], intents: IntentDefinition[]): IntentMatch[] {
  const m = new IntentMatcher(intents);
  for (const i of items) m.add(i);
  return m.result();
}
