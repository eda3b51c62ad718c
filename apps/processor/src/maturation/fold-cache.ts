import type postgres from "postgres";
import type { DetectorConfig } from "@cellar/shared/analysis/detector-config";
import type { PriceBook } from "@cellar/shared/pricing/table";
import type { IntentDefinition } from "../analysis/catalog.ts";
import type { SessionAnalyzer } from "../analysis/session.ts";
import type { EventInput, TraceInput } from "../analysis/transcript.ts";
import { MESSAGE_EVENT_NAMES } from "../otlp/linked.ts";
import { UNSIZED_TRACE_BYTES, type HistoryPaging } from "./store.ts";

/**
 * Folds kept between a session's maturations (docs/maturation.md, "Continued folds"): a session
 * re-opened by new traces is folded from its last fold, fed only what came after it, instead of
 * reading and folding its whole history again. Exact or not at all: a fold is continued only when
 * the session's history now is the folded one plus traces and events that all come after every
 * folded one in the fold's order, with the same detector settings, intents and price book, and
 * the session matured last by this fold (no other processor in between). Anything else (a trace
 * arriving out of order, one expired, a call whose messages come as log records, another price
 * book, a restart, an evicted fold) folds the whole history as before. The analyzer's `finish()`
 * leaves it as it was (analysis/session.ts), and a changed latency baseline re-judges every call.
 * Memory: a budget of the folds' approximate bytes, least recently matured first out.
 */
export const DEFAULT_FOLD_CACHE_BYTES = 32 * 1024 * 1024;

/** What a fold has folded: the traces and events (by key), and the latest time among them. */
export interface FoldedHistory {
  traces: Set<string>;
  events: Set<string>;
  /** The latest trace start or event time folded (ms): a continuation folds only later ones. */
  lastMs: number;
  /** False once a trace rebuilt from message events, or a message event, was folded: never continued. */
  plain: boolean;
}

export interface FoldEntry {
  analyzer: SessionAnalyzer;
  history: FoldedHistory;
  /** The session's maturation count this fold produced. */
  maturationCount: number;
  contextKey: string;
  prices: PriceBook;
  /** Fed from digests (else from payloads, after a NeedsPayload). */
  digests: boolean;
  /** Read as a streamed history (store.ts's order), else as a batch (feedHistory's order). */
  streamed: boolean;
}

const MESSAGE_NAMES = new Set(MESSAGE_EVENT_NAMES);

/** Feeds an analyzer and records what it folded into `history`. */
export function recordingFeed(
  analyzer: Pick<SessionAnalyzer, "addTrace" | "addEvent">,
  history: FoldedHistory,
): Pick<SessionAnalyzer, "addTrace" | "addEvent"> {
  return {
    addTrace(t: TraceInput) {
      if (!t.pk || t.payload?.otel?.messages === "none") history.plain = false;
      else history.traces.add(t.pk);
      history.lastMs = Math.max(history.lastMs, t.startTime.getTime());
      analyzer.addTrace(t);
    },
    addEvent(e: EventInput) {
      if (e.traceId && MESSAGE_NAMES.has(e.name)) history.plain = false;
      history.events.add(e.id);
      history.lastMs = Math.max(history.lastMs, e.timestamp.getTime());
      analyzer.addEvent(e);
    },
  };
}
export const emptyHistory = (): FoldedHistory => ({
  traces: new Set(),
  events: new Set(),
  lastMs: -Infinity,
  plain: true,
});

/** The inputs a fold depends on besides the history and the latency baseline. */
export const foldContextKey = (config: DetectorConfig, intents: IntentDefinition[], condensed: boolean): string =>
  JSON.stringify([config, intents, condensed]);

/** A session's trace and event keys now (no payload read). */
export interface HistoryKeys {
  traces: Array<{ id: string; startMs: number; awaits: boolean; jsonBytes: number }>;
  events: Array<{ id: string; ms: number; message: boolean }>;
}

export async function historyKeys(
  tx: postgres.TransactionSql | postgres.Sql,
  sessionPks: string[],
): Promise<Map<string, HistoryKeys>> {
  const out = new Map<string, HistoryKeys>(sessionPks.map((id) => [id, { traces: [], events: [] }]));
  if (sessionPks.length === 0) return out;
  const ids = tx.array(sessionPks);
  const [traces, events] = await Promise.all([
    tx<{ session_pk: string; id: string; start_time: Date; awaits: boolean; json_bytes: number }[]>`
      select session_pk, id, start_time, coalesce(awaits_messages, payload->'otel'->>'messages' = 'none', false) as awaits,
        coalesce(payload_bytes, ${UNSIZED_TRACE_BYTES}::int8)::float8 as json_bytes
      from traces where session_pk = any(${ids}::uuid[])`,
    tx<{ session_pk: string; id: string; timestamp: Date; message: boolean }[]>`
      select session_pk, id, timestamp, (trace_id is not null and name = any(${tx.array(MESSAGE_EVENT_NAMES)}::text[])) as message
      from events where session_pk = any(${ids}::uuid[])`,
  ]);
  for (const t of traces)
    out.get(t.session_pk)?.traces.push({
      id: t.id,
      startMs: new Date(t.start_time).getTime(),
      awaits: t.awaits,
      jsonBytes: Number(t.json_bytes),
    });
  for (const e of events)
    out.get(e.session_pk)?.events.push({ id: e.id, ms: new Date(e.timestamp).getTime(), message: e.message });
  return out;
}

/**
 * The traces and events a fold must be fed to be the session's whole fold now, or null when
 * continuing it could differ from folding the whole history (or would read more than one page).
 */
export function extension(
  folded: FoldedHistory,
  now: HistoryKeys,
  paging: HistoryPaging,
): { traces: string[]; events: string[] } | null {
  if (!folded.plain) return null;
  const traces: string[] = [];
  const events: string[] = [];
  let seen = 0;
  let bytes = 0;
  for (const t of now.traces) {
    if (folded.traces.has(t.id)) {
      seen++;
      continue;
    }
    // After everything folded (strictly: the fold's order breaks ties within a millisecond).
    if (t.awaits || !(t.startMs > folded.lastMs)) return null;
    traces.push(t.id);
    bytes += t.jsonBytes;
  }
  if (seen !== folded.traces.size) return null; // a folded trace is gone (expired, deleted)
  seen = 0;
  for (const e of now.events) {
    if (folded.events.has(e.id)) {
      seen++;
      continue;
    }
    if (e.message || !(e.ms > folded.lastMs)) return null;
    events.push(e.id);
  }
  if (seen !== folded.events.size) return null;
  if (traces.length > paging.tracesPerBatch || bytes > paging.jsonBytesPerPage || events.length > paging.eventsPerPage)
    return null;
  return { traces, events };
}

/** The folds kept, by session, within a byte budget (least recently put first out). */
export class FoldCache {
  private readonly entries = new Map<string, { entry: FoldEntry; bytes: number }>();
  private bytes = 0;
  /** Maturations continued from a kept fold, and those that found one they could not continue. */
  readonly stats = { continued: 0, refused: 0 };
  constructor(readonly maxBytes = DEFAULT_FOLD_CACHE_BYTES) {}

  /** A session's kept fold, taken out: a failed maturation leaves nothing half-fed behind. */
  take(sessionPk: string): FoldEntry | undefined {
    const kept = this.entries.get(sessionPk);
    if (!kept) return undefined;
    this.entries.delete(sessionPk);
    this.bytes -= kept.bytes;
    return kept.entry;
  }

  /** Keeps a fold once its maturation committed. */
  put(sessionPk: string, entry: FoldEntry): void {
    this.take(sessionPk);
    // Twice the analyzer's estimate: its items, and their stored form kept beside them (persist-transcript.ts).
    const bytes = 2 * entry.analyzer.approxBytes + 64 * (entry.history.traces.size + entry.history.events.size) + 1_000;
    if (bytes > this.maxBytes / 8) return;
    this.entries.set(sessionPk, { entry, bytes });
    this.bytes += bytes;
    for (const pk of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.take(pk);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
