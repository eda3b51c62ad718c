import type { PriceBook } from "@cellar/shared/pricing/table";
import { callsOfTrace, type ModelCall } from "./calls.ts";
import {
  IntentMatcher,
  ToolSchemaCollector,
  type IntentDefinition,
  type IntentMatch,
  type ToolSchemaSeen,
} from "./catalog.ts";
import { DEFAULT_DETECTOR_CONFIG, type DetectorConfig } from "@cellar/shared/analysis/detector-config";
import { latencyFinding, type Finding, type LatencyNorms } from "./detectors.ts";
import { createDetectors, type Detector } from "./detectors-registry.ts";
import { callMetrics, costByModel, sessionMetrics, toolCosts, type CostByModel, type ToolCost } from "./metrics.ts";
import { CondensedTranscript, condensedLine, extractiveTldr, type TldrFacts } from "./tldr.ts";
import {
  contentText,
  DEFAULT_TRANSCRIPT_CAPS,
  TranscriptBuilder,
  traceOrder,
  type EventInput,
  type TraceInput,
  type TranscriptCaps,
  type TranscriptItem,
} from "./transcript.ts";

/** Per-read item cap: a session with more items is stored up to the cap and marked truncated. */
export const TRANSCRIPT_ITEM_CAP = DEFAULT_TRANSCRIPT_CAPS.maxItems;

/** What the analysis of one session needs besides its history: all plain values, no I/O. */
export interface AnalysisContext {
  config?: DetectorConfig;
  /** The tenant's price book (default: the built-in table). */
  prices?: PriceBook;
  latencyNorms?: LatencyNorms;
  intents?: IntentDefinition[];
  caps?: TranscriptCaps;
  /**
   * Whether `tldrFacts.condensed` is built (default true). Only the AI-written TL;DR reads it
   * (maturation/llm-tldr.ts), and it is a line per transcript item: a maturation without a
   * summary model leaves it empty.
   */
  condensedTranscript?: boolean;
}

export interface SessionAnalysis {
  items: TranscriptItem[];
  truncated: boolean;
  /** Items the history produced, kept or not. */
  totalItems: number;
  metrics: ReturnType<typeof sessionMetrics>;
  costByModel: CostByModel[];
  toolCosts: ToolCost[];
  findings: Finding[];
  toolSchemas: ToolSchemaSeen[];
  intents: IntentMatch[];
  tldr: string;
  tldrFacts: TldrFacts;
}

/**
 * A session's analysis, fed its history in order: traces by start time (`addTrace`) and events
 * (`addEvent`), interleaved or not. Pure: the same history gives the same result, and the same
 * result whether it came in one piece or in pages. Memory held between calls: the transcript's
 * kept items (capped), one compact record per model call and per tool call, the tool schemas and
 * intent matches seen, and a bounded condensed transcript; never a whole payload.
 *
 * `finish()` changes nothing: the same analyzer can be fed more history and finished again, with
 * the result a fresh analyzer fed the whole history gives (a re-matured session continued from its
 * last fold: maturation/fold-cache.ts). The one input that may change in between is the service's
 * latency baseline (`setLatencyNorms`): the latency findings are then judged again, at `finish()`,
 * over every call with the baseline of that moment, as a whole fold would.
 */
export class SessionAnalyzer {
  private readonly config: DetectorConfig;
  private readonly transcript: TranscriptBuilder;
  /** Every enabled detector (detectors-registry.ts), each fed the hooks it has. */
  private readonly detectors: Detector[];
  private readonly schemas = new ToolSchemaCollector();
  private readonly intents: IntentMatcher;
  private readonly calls: ModelCall[] = [];
  private readonly findings: Finding[] = [];
  private counts = { turns: 0, traces: 0, events: 0, toolResults: 0, errors: 0, items: 0 };
  private first = Infinity;
  private last = -Infinity;
  private firstUser: string | null = null;
  private lastAssistant: { text: string; finishReason: string | null; ms: number } | null = null;
  private tools = new Set<string>();
  private latencyNorms: LatencyNorms | undefined;
  /** Calls were judged against another baseline than the current one (setLatencyNorms). */
  private latencyStale = false;

  constructor(private readonly ctx: AnalysisContext = {}) {
    this.config = ctx.config ?? DEFAULT_DETECTOR_CONFIG;
    this.latencyNorms = ctx.latencyNorms;
    this.intents = new IntentMatcher(ctx.intents ?? []);
    this.detectors = createDetectors(this.config);
    this.transcript = new TranscriptBuilder(ctx.caps ?? DEFAULT_TRANSCRIPT_CAPS, (item) => this.seeItem(item));
  }

  addTrace(t: TraceInput): void {
    this.counts.traces++;
    this.widen(t.startTime.getTime());
    this.widen(t.endTime.getTime());
    const step = this.transcript.addTrace(t);
    this.schemas.add(t);
    const calls = callsOfTrace(t, step.consumedTools, this.ctx.prices);
    for (const d of this.detectors) if (d.trace) this.findings.push(...d.trace(calls));
    const detectorContext = { latencyNorms: this.latencyNorms };
    for (const c of calls) {
      for (const d of this.detectors) {
        const f = d.call?.(c, detectorContext);
        if (f) this.findings.push(f);
      }
      // Keep the numbers; drop the text and the arguments (bounded memory per call).
      this.calls.push({
        ...c,
        textHead: "",
        toolCalls: c.toolCalls.map((tc) => ({ id: null, name: tc.name, arguments: "" })),
      });
    }
  }

  addEvent(e: EventInput): void {
    this.counts.events++;
    this.widen(e.timestamp.getTime());
    if ((e.severityNumber ?? 0) >= this.config.error_event.minSeverity) this.counts.errors++;
    for (const d of this.detectors) if (d.event) this.findings.push(...d.event(e));
    this.transcript.addEvent(e);
  }

  /** The service's latency baseline from now on (a continued fold's later maturation). */
  setLatencyNorms(norms: LatencyNorms | undefined): void {
    if (norms === this.latencyNorms) return;
    this.latencyNorms = norms;
    if (this.calls.length) this.latencyStale = true;
  }

  /** A rough size of what this analyzer holds (the fold cache's budget). */
  get approxBytes(): number {
    return this.transcript.approxBytes + this.calls.length * 400 + this.findings.length * 600;
  }

  finish(): SessionAnalysis {
    const built = this.transcript.finish();
    // A baseline changed since some calls were judged: every call judged again against the current
    // one (the kept call records hold what latencyFinding reads). Only ties of the same detector
    // keep push order in the sort below, and these stay in call order: the order a whole fold gives.
    const own =
      this.latencyStale && this.config.latency_outlier.enabled
        ? [
            ...this.findings.filter((f) => f.detector !== "latency_outlier"),
            ...this.calls.flatMap((c) => latencyFinding(c, this.config.latency_outlier, this.latencyNorms) ?? []),
          ]
        : this.findings;
    const findings = [
      ...own,
      ...this.detectors.flatMap(
        (d) =>
          d.finish?.({ answered: this.transcript.answeredCalls, impliedAnswered: this.transcript.impliedAnswered }) ??
          [],
      ),
    ].sort(
      (a, b) =>
        a.occurredAt.getTime() - b.occurredAt.getTime() ||
        a.detector.localeCompare(b.detector) ||
        String(a.evidence.itemId).localeCompare(String(b.evidence.itemId)),
    );
    const span = this.counts.traces + this.counts.events > 0 ? { first: this.first, last: this.last } : null;
    const metrics = sessionMetrics(this.calls, { ...this.counts, problems: findings.length }, span);
    const condensed = new CondensedTranscript();
    if (this.ctx.condensedTranscript ?? true) for (const item of built.items) condensed.add(condensedLine(item));
    const tldrFacts: TldrFacts = {
      firstUser: this.firstUser,
      lastAssistant: this.lastAssistant && {
        text: this.lastAssistant.text,
        finishReason: this.lastAssistant.finishReason,
      },
      tools: [...this.tools],
      turns: metrics.turns,
      modelCalls: metrics.modelCalls,
      toolCalls: metrics.toolCalls,
      totalTokens: metrics.totalTokens,
      costUsd: metrics.costUsd,
      findingTitles: findings.map((f) => f.title),
      condensed: condensed.text(),
    };
    return {
      items: built.items,
      truncated: built.truncated,
      totalItems: this.counts.items,
      metrics,
      costByModel: costByModel(this.calls),
      toolCosts: toolCosts(this.calls),
      findings,
      toolSchemas: this.schemas.result(),
      intents: this.intents.result(),
      tldr: extractiveTldr(tldrFacts),
      tldrFacts,
    };
  }

  private widen(ms: number) {
    if (ms < this.first) this.first = ms;
    if (ms > this.last) this.last = ms;
  }

  /** Every item, in discovery order (kept or past the caps). */
  private seeItem(item: TranscriptItem) {
    this.counts.items++;
    if (item.type === "user") {
      this.counts.turns++;
      if (this.firstUser === null && contentText(item.content).trim())
        this.firstUser = contentText(item.content).slice(0, 1_000);
    } else if (item.type === "tool_result") this.counts.toolResults++;
    else if (item.type === "tool_call") this.tools.add(String(item.toolName ?? "unknown"));
    else if (item.type === "assistant" && contentText(item.content).trim()) {
      const ms = Date.parse(item.timestamp);
      if (!this.lastAssistant || ms >= this.lastAssistant.ms) {
        this.lastAssistant = {
          text: contentText(item.content).slice(0, 1_000),
          finishReason: typeof item.finishReason === "string" ? item.finishReason : null,
          ms,
        };
      }
    }
    this.intents.add(item);
    for (const d of this.detectors) d.item?.(item);
  }
}

/**
 * Feeds a whole (small) history in the order the maturation store streams it: traces in
 * `traceOrder` (start, end, trace id) and events by (time, id), merged by time (a trace first on
 * a tie).
 */
export function feedHistory(
  a: Pick<SessionAnalyzer, "addTrace" | "addEvent">,
  traces: TraceInput[],
  events: EventInput[],
): void {
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const ts = [...traces].sort(traceOrder);
  const es = [...events].sort((x, y) => x.timestamp.getTime() - y.timestamp.getTime() || cmp(x.id, y.id));
  let i = 0,
    j = 0;
  while (i < ts.length || j < es.length) {
    if (i < ts.length && (j >= es.length || ts[i].startTime.getTime() <= es[j].timestamp.getTime()))
      a.addTrace(ts[i++]);
    else a.addEvent(es[j++]);
  }
}

/** The whole-history form (unit tests). */
export function analyzeSession(traces: TraceInput[], events: EventInput[], ctx: AnalysisContext = {}): SessionAnalysis {
  const a = new SessionAnalyzer(ctx);
  feedHistory(a, traces, events);
  return a.finish();
}

export interface TraceAnalysis {
  metrics: Record<string, unknown>;
  costUsd: number | null;
}

/** Per-trace metrics: the same call metrics as a session, over the trace's responses only. */
export function analyzeTrace(t: TraceInput, prices?: PriceBook): TraceAnalysis {
  const calls = callsOfTrace(t, [], prices);
  const metrics = { durationMs: t.endTime.getTime() - t.startTime.getTime(), ...callMetrics(calls) };
  return { metrics: { ...metrics, costByModel: costByModel(calls) }, costUsd: metrics.costUsd };
}
