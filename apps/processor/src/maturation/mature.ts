import { createHash } from "node:crypto";
import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { Topology } from "@cellar/shared/nats/topology";
import { maturedStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import {
  MATURATIONS_PER_MESSAGE,
  maturationKey,
  type MaturedMessage,
  type MaturedStreamMessage,
} from "@cellar/shared/payloads";
import * as maturationState from "@cellar/shared/maturation/state";
import { loadPriceBooks, loadPriceBooksOfTraces } from "@cellar/shared/pricing/tenant";
import type { Logger } from "@cellar/shared/logger";
import { NeedsPayload } from "../analysis/chain.ts";
import { analyzeTrace, feedHistory, SessionAnalyzer } from "../analysis/session.ts";
import { activityLane } from "./activity.ts";
import { continueFolds } from "./fold-continue.ts";
import { emptyHistory, foldContextKey, recordingFeed, type FoldCache, type FoldEntry } from "./fold-cache.ts";
import type { FailurePolicy } from "./failure-policy.ts";
import { llmTldr, type SummaryLlm } from "./llm-tldr.ts";
import { prepareServices } from "./norms.ts";
import {
  persistSessionAnalyses,
  claimedTraceAnalyses,
  persistTranscriptItems,
  TranscriptItemWriter,
  type Materialization,
  type SessionSummary,
} from "./persist.ts";
import {
  DEFAULT_HISTORY_PAGING,
  historySizes,
  loadHistoryBatch,
  loadTracesForMetrics,
  planHistoryReads,
  selectMaturing,
  streamHistory,
  type HistoryPaging,
  type HistoryReadOptions,
  type LatencyNormsSource,
  type SessionRow,
  type TraceRow,
} from "./store.ts";

export interface MaturationDeps {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  windowSeconds: number;
  /** Test hook: runs after the Postgres commit and before the MATURED publish. */
  afterCommit?: (message: MaturedMessage) => Promise<void> | void;
  /** The service's latency baseline (latency-outlier detector); without it that detector is off. */
  latencyNorms?: LatencyNormsSource;
  /** Pages of history read at once (bounded memory); default DEFAULT_HISTORY_PAGING. */
  historyPaging?: HistoryPaging;
  /** Failed attempts before a session is parked as failed, and the backoff between them. */
  failurePolicy?: FailurePolicy;
  /** OpenAI-compatible endpoint for AI-written TL;DRs; extractive only without it. */
  summaryLlm?: SummaryLlm;
  /** Folds kept between a session's maturations (fold-cache.ts); without it every fold is whole. */
  foldCache?: FoldCache;
}

/**
 * `republished`: committed earlier but its MATURED publish was still owed (crash replay).
 * `backing-off`: a failed session waiting out its retry delay; `parked`: failed for good until
 * new activity; `failed`: a trace whose maturation failed alone (its error in `errors`).
 */
export type MaturationOutcome =
  | "matured"
  | "republished"
  | "already-published"
  | "still-active"
  | "backing-off"
  | "parked"
  | "failed"
  | "missing";

/**
 * Outcome per entity; `dueInMs`: for still-active ones, how long until they are idle for the
 * window (for backing-off ones, until their retry); `errors`: why a `failed` one failed.
 */
export type Outcomes = Map<string, MaturationOutcome> & { dueInMs: Map<string, number>; errors: Map<string, unknown> };
export const newOutcomes = (ids: string[]): Outcomes =>
  Object.assign(new Map(ids.map((id) => [id, "missing" as MaturationOutcome])), {
    dueInMs: new Map<string, number>(),
    errors: new Map<string, unknown>(),
  });
const owed = (row: { maturation_count: number; published_count?: number }) =>
  Number(row.published_count ?? 0) < Number(row.maturation_count);

/**
 * Locked rows -> due for maturation, or an outcome now (a matured row may still owe its publish).
 * `deferred`: reopened and due while its last maturation's publish is still owed; not matured
 * in this pass (see matureSessions).
 */
function triage<R extends SessionRow | TraceRow>(locked: R[], outcomes: Outcomes, message: (row: R) => MaturedMessage) {
  const republish: MaturedMessage[] = [];
  const due: R[] = [];
  const deferred: R[] = [];
  for (const row of locked) {
    if (row.status === "matured") {
      outcomes.set(row.id, owed(row) ? "republished" : "already-published");
      if (owed(row)) republish.push(message(row));
      continue;
    }
    // Reopened while its last maturation's publish is still owed (Postgres or NATS failed after
    // the commit): publish it now (same message id as the lost one). The owed message lives
    // only in this row until recorded, so a due row is not matured in this pass: a new
    // maturation would overwrite count and time, and if its publish failed too the owed one was
    // lost for good (the chaos runs lost #1, then at load 51 #2, this way). Published and
    // recorded first, then matured (matureSessions).
    const owes = owed(row) && Boolean(row.matured_at);
    if (owes) republish.push(message(row));
    if (owes && row.idle && !row.failed && !(Number(row.retry_in_ms ?? 0) > 0)) {
      outcomes.set(row.id, "republished");
      deferred.push(row);
    } else if (!row.idle) {
      outcomes.set(row.id, "still-active");
      outcomes.dueInMs.set(row.id, Math.max(0, Number(row.due_in_ms ?? 0)));
    } else if (row.failed) {
      outcomes.set(row.id, "parked");
    } else if (Number(row.retry_in_ms ?? 0) > 0) {
      outcomes.set(row.id, "backing-off");
      outcomes.dueInMs.set(row.id, Number(row.retry_in_ms));
    } else due.push(row);
  }
  return { republish, due, deferred };
}

/**
 * Matures the sessions of a batch that have really been idle for the window. Analysis,
 * materialization and `maturation_count + 1` commit in one transaction under row locks (taken
 * in id order: no deadlock with another processor); multi-row statements, so a burst of
 * markers costs a few statements per batch, not per session. The MATURED publishes come after
 * the commit, batched (maturedStreamMessages), so a crash between the two and a replay publish
 * each maturation again with its same key, and every consumer takes it once.
 */
export async function matureSessions(deps: MaturationDeps, sessionPks: string[], passes = 2): Promise<Outcomes> {
  const ids = [...new Set(sessionPks)];
  const outcomes = newOutcomes(ids);
  // Before the row locks: the services' detector context, and their latency baselines warmed.
  const context = await prepareServices(deps.sql, ids, deps.latencyNorms);
  const result = await deps.sql.begin(async (tx) => {
    const locked = await selectMaturing(tx, "session", { lockIds: ids, windowSeconds: deps.windowSeconds });
    const { republish, due, deferred } = triage(locked, outcomes, sessionMessage);
    if (due.length === 0) return { republish, deferred, matured: [] as Materialization[], kept: [] };
    // Two reads in one round trip (pipelined on the transaction's connection).
    const [pricesOf, sizes] = await Promise.all([
      loadPriceBooks(
        tx,
        due.map((s) => s.tenant_id),
      ),
      historySizes(
        tx,
        due.map((r) => r.id),
      ),
    ]);
    const analysed: Array<{ row: SessionRow; analysis: SessionSummary }> = [];
    /** Folds to keep once this transaction commits (fold-cache.ts), by session. */
    const folds = new Map<string, Omit<FoldEntry, "maturationCount">>();
    // One session at a time: its history streams through the analyzer page by page, and its
    // items are written before the next session is read (docs/maturation.md, "Bounded memory").
    const paging = deps.historyPaging ?? DEFAULT_HISTORY_PAGING;
    const rowOf = new Map(due.map((r) => [r.id, r]));
    const itemWriter = new TranscriptItemWriter(tx);
    const plan = planHistoryReads(
      due.map((r) => r.id),
      sizes,
      paging,
    );
    const streamed = new Set(plan.flatMap((step) => ("stream" in step ? [step.stream] : [])));
    const contextKeys = new Map<string, string>();
    const foldContext = async (row: SessionRow) => {
      const { config, intents } = context.get(row.trace_service_id)!;
      const latencyNorms = config.latency_outlier.enabled
        ? await deps.latencyNorms?.(row.trace_service_id, config, tx)
        : undefined;
      const condensed = Boolean(deps.summaryLlm);
      let key = contextKeys.get(row.trace_service_id);
      if (key === undefined) contextKeys.set(row.trace_service_id, (key = foldContextKey(config, intents, condensed)));
      return { config, intents, latencyNorms, condensed, key };
    };
    const finishFold = async (row: SessionRow, analyzer: SessionAnalyzer, fold: Omit<FoldEntry, "maturationCount">) => {
      // Kept from a session's second maturation on: most sessions mature once, and a fold kept
      // for nothing costs its memory and the collector's time (docs/maturation.md).
      const keep = Boolean(deps.foldCache) && fold.history.plain && row.maturation_count > 0;
      const { items, ...summary } = analyzer.finish();
      await persistTranscriptItems(tx, row, items, row.maturation_count > 0, itemWriter, keep);
      analysed.push({ row, analysis: { ...summary, keptItems: items.length } });
      if (keep) folds.set(row.id, fold);
    };
    /**
     * `feed` reads the history with digests where traces have them (docs/analyse-once.md); when
     * the fold needs what only payloads have (NeedsPayload), a new analyzer is fed from payloads.
     */
    const analyse = async (
      row: SessionRow,
      feed: (a: Pick<SessionAnalyzer, "addTrace" | "addEvent">, opts: HistoryReadOptions) => Promise<void> | void,
    ) => {
      const ctx = await foldContext(row);
      const newAnalyzer = () =>
        new SessionAnalyzer({
          config: ctx.config,
          intents: ctx.intents,
          latencyNorms: ctx.latencyNorms,
          prices: pricesOf(row.tenant_id),
          condensedTranscript: ctx.condensed,
        });
      let analyzer = newAnalyzer();
      let history = emptyHistory();
      let digests = true;
      try {
        await feed(recordingFeed(analyzer, history), { digests: true });
      } catch (err) {
        if (!(err instanceof NeedsPayload)) throw err;
        deps.logger.debug("session folded from payloads", { sessionPk: row.id, why: err.message });
        analyzer = newAnalyzer();
        history = emptyHistory();
        digests = false;
        await feed(recordingFeed(analyzer, history), { digests: false });
      }
      await finishFold(row, analyzer, {
        analyzer,
        history,
        digests,
        contextKey: ctx.key,
        prices: pricesOf(row.tenant_id),
        streamed: streamed.has(row.id),
      });
    };
    // Sessions re-opened since this process folded them: fed only what came after (fold-cache.ts).
    const whole = await continueFolds(deps.foldCache, tx, due, { paging, streamed, pricesOf, foldContext, finishFold });
    for (const step of plan) {
      if ("stream" in step) {
        if (!whole.has(step.stream)) continue;
        const row = rowOf.get(step.stream)!;
        await analyse(row, (a, opts) => streamHistory(tx, row, a, paging, opts));
        continue;
      }
      const batch = step.batch.filter((id) => whole.has(id));
      if (batch.length === 0) continue;
      const histories = await loadHistoryBatch(
        tx,
        batch.map((id) => rowOf.get(id)!),
      );
      for (const id of batch) {
        const h = histories.get(id)!;
        histories.delete(id);
        const row = rowOf.get(id)!;
        await analyse(row, async (a, opts) => {
          const { traces, events } = opts.digests ? h : (await loadHistoryBatch(tx, [row], opts)).get(id)!;
          feedHistory(a, traces, events);
        });
      }
    }
    await itemWriter.flush();
    const updated = await maturationState.matureSessions(
      tx,
      due.map((s) => s.id),
    );
    const before = new Map(analysed.map((a) => [a.row.id, a]));
    const list: Materialization[] = updated.map((u) => {
      const { row, analysis } = before.get(u.id)!;
      return {
        row: { ...u, service_name: row.service_name },
        analysis,
        replace: row.maturation_count > 0,
        throughActivitySeq: Number(row.activity_seq),
        throughIngestedAt: new Date(row.last_ingested_at!),
      };
    });
    await persistSessionAnalyses(tx, list);
    for (const m of list) outcomes.set(m.row.id, "matured");
    const kept = updated.flatMap((u) => {
      const fold = folds.get(u.id);
      return fold ? [{ id: u.id, entry: { ...fold, maturationCount: u.maturation_count } }] : [];
    });
    return { republish, deferred, matured: list, kept };
  });
  for (const { id, entry } of result.kept ?? []) deps.foldCache?.put(id, entry);
  if (deps.summaryLlm && result.matured.length) {
    await mapLimit(result.matured, 4, (m) => writeLlmTldr(deps, sessionMessage(m.row), m.analysis));
  }
  // A failed publish throws here: a deferred row's owed message is still in its row, untouched.
  await publishAll(deps, [...result.republish, ...result.matured.map((m) => sessionMessage(m.row))]);
  // Deferred rows: their owed maturation is now published and recorded, so they mature in a
  // pass of their own. Owed again by then (another processor matured it and failed to publish):
  // left for their marker, re-armed shortly.
  const again = result.deferred.map((r) => r.id);
  if (again.length && passes > 1) {
    const next = await matureSessions(deps, again, passes - 1);
    for (const id of again) {
      outcomes.set(id, next.get(id)!);
      if (next.dueInMs.has(id)) outcomes.dueInMs.set(id, next.dueInMs.get(id)!);
    }
  } else
    for (const id of again) {
      outcomes.set(id, "still-active");
      outcomes.dueInMs.set(id, 1_000);
    }
  return outcomes;
}

/** Replaces the extractive TL;DR with an AI-written one (after commit: no row lock held while waiting). */
async function writeLlmTldr(deps: MaturationDeps, message: MaturedMessage, analysis: SessionSummary): Promise<void> {
  const text = await llmTldr(deps.summaryLlm!, analysis.tldrFacts, analysis.tldr, deps.logger);
  if (!text) return;
  await deps.sql`
    update session_analyses set tldr = ${text}, tldr_source = 'llm'
    where session_pk = ${message.entityPk} and maturation_count = ${message.maturationCount}`;
}

/**
 * Traces mature once (count 1); a trace seen again is the same event, never a second one.
 * Traces never change after insert, so their payloads and price books are read first (one round
 * trip, no lock) and analysed; then one statement claims the idle ones and writes their analyses
 * (atomic by itself: no transaction, whose BEGIN and COMMIT were two more round trips of tens of
 * ms each under load; docs/performance.md, "Maturation throughput"). Only what it did not claim
 * is looked up to learn why (still active, matured before with the publish owed, gone).
 */
export async function matureTraces(deps: MaturationDeps, tracePks: string[]): Promise<Outcomes> {
  const ids = [...new Set(tracePks)];
  const outcomes = newOutcomes(ids);
  const [traces, pricesOf] = await Promise.all([
    loadTracesForMetrics(deps.sql, ids),
    loadPriceBooksOfTraces(deps.sql, ids),
  ]);
  const analyses = traces.map((tr) => ({
    row: tr.row,
    base: tr.base,
    analysis: analyzeTrace(tr, pricesOf(tr.tenantId)),
  }));
  const claims = await maturationState.matureTraces(
    deps.sql,
    traces.map((tr) => ({ pk: tr.id, ingestedKey: tr.row.ingested_key })),
    deps.windowSeconds,
    claimedTraceAnalyses(deps.sql, analyses),
  );
  const rowOf = new Map(traces.map((tr) => [tr.id, tr.row]));
  const claimed: TraceRow[] = claims.map((c) => ({
    ...rowOf.get(c.trace_pk)!,
    status: "matured",
    maturation_count: 1,
    matured_at: c.matured_at,
    ingested_key: c.ingested_key,
  }));
  for (const r of claimed) outcomes.set(r.id, "matured");
  let republish: MaturedMessage[] = [];
  const keys = new Map(claims.map((c) => [c.trace_pk, c.ingested_key]));
  if (claimed.length < ids.length) {
    const taken = new Set(claimed.map((c) => c.id));
    const rest = ids.filter((id) => !taken.has(id));
    const rows = await selectMaturing(deps.sql, "trace", { lockIds: rest, windowSeconds: deps.windowSeconds });
    const triaged = triage(rows, outcomes, traceMessage);
    republish = triaged.republish;
    for (const r of rows) if (outcomes.get(r.id) === "republished" && r.ingested_key) keys.set(r.id, r.ingested_key);
    // Due but not claimed: its pending row changed between the two statements (a claim that
    // rolled back). The marker's redelivery, or the sweep, looks again.
    for (const r of [...triaged.due, ...triaged.deferred]) {
      outcomes.set(r.id, "still-active");
      outcomes.dueInMs.set(r.id, 1_000);
    }
  }
  await publishAll(deps, [...republish, ...claimed.map(traceMessage)], keys);
  return outcomes;
}

/**
 * Pending traces inserted by the write whose transaction time is `micros` (a batch key), of the
 * tenants of the key's lane (all of them for a key written before lanes: `lane` null).
 */
export async function tracesOfBatch(sql: postgres.Sql, micros: string, lane: string | null = null): Promise<string[]> {
  if (!/^\d{1,20}$/.test(micros)) return [];
  return maturationState.tracesOfBatch(sql, micros, lane === null ? undefined : (t) => activityLane(t) === lane);
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/**
 * Publishes in batches (maturedStreamMessages: the stream drops a second copy of the same batch
 * within its duplicate window), then records the publishes so neither a stale marker nor the
 * sweep publishes them again later. A crash between publish and record replays the same
 * maturations, each with its key: a consumer takes it once (docs/maturation.md).
 */
export async function publishAll(
  deps: MaturationDeps,
  messages: MaturedMessage[],
  /** Trace pk -> its pending row's `ingested_at` as text, where known: the record goes by that key. */
  traceKeys?: Map<string, string>,
): Promise<void> {
  if (messages.length === 0) return;
  for (const m of messages) await deps.afterCommit?.(m);
  await Promise.all(
    maturedStreamMessages(messages).map(({ message, msgID }) =>
      publish(deps.js, deps.topology, maturedStream, message, { msgID }),
    ),
  );
  // One row per session, its highest count (an UPDATE joined to two rows of one session applies
  // one of them). matureSessions never publishes two counts of a session together any more: an
  // owed one goes out, and is recorded, before the session matures again.
  const highest = new Map<string, number>();
  for (const m of messages)
    if (m.type === "session.matured")
      highest.set(m.entityPk, Math.max(highest.get(m.entityPk) ?? 0, m.maturationCount));
  const sessions = [...highest].map(([pk, count]) => ({ pk, count }));
  const traces = messages
    .filter((m) => m.type === "trace.matured")
    .map((m) => ({ pk: m.entityPk, ingestedKey: traceKeys?.get(m.entityPk) }));
  await maturationState.recordPublished(deps.sql, sessions, traces);
}

/**
 * What `publishAll` puts on MATURED: a batch per tenant and kind of up to MATURATIONS_PER_MESSAGE
 * maturations (sessions apart from traces: a batch's items share the subject a single one would
 * take), its id the hash of its items' keys. A replay of the same chunk is dropped by the stream;
 * a maturation published again in another grouping (a crash between publish and record, another
 * processor's sweep racing the marker, an owed one republished beside others) reaches MATURED
 * twice, and every consumer takes each maturation once, by its key (docs/maturation.md, "One
 * effect per maturation"). A message per session cost about 60 us per trace (docs/performance.md).
 */
export function maturedStreamMessages(
  messages: MaturedMessage[],
): Array<{ message: MaturedStreamMessage; msgID: string }> {
  const out: Array<{ message: MaturedStreamMessage; msgID: string }> = [];
  const groups = new Map<string, MaturedMessage[]>();
  for (const m of messages) {
    const group = `${m.type}\u0000${m.tenantId}`;
    if (groups.has(group)) groups.get(group)!.push(m);
    else groups.set(group, [m]);
  }
  for (const items of groups.values())
    for (let i = 0; i < items.length; i += MATURATIONS_PER_MESSAGE) {
      const part = items.slice(i, i + MATURATIONS_PER_MESSAGE);
      const keys = part.map(maturationKey).sort().join("\n");
      out.push({
        message: { type: "matured.batch", tenantId: part[0].tenantId, maturations: part },
        msgID: `batch:${createHash("sha256").update(keys).digest("hex")}`,
      });
    }
  return out;
}

export function sessionMessage(s: SessionRow): MaturedMessage {
  return {
    type: "session.matured",
    tenantId: s.tenant_id,
    traceServiceId: s.trace_service_id,
    serviceName: s.service_name,
    entityPk: s.id,
    sessionId: s.session_id,
    maturationCount: s.maturation_count,
    occurredAt: new Date(s.matured_at!).toISOString(),
  };
}
export function traceMessage(t: TraceRow): MaturedMessage {
  return {
    type: "trace.matured",
    tenantId: t.tenant_id,
    traceServiceId: t.trace_service_id,
    serviceName: t.service_name,
    entityPk: t.id,
    traceId: t.trace_id,
    maturationCount: 1,
    occurredAt: new Date(t.matured_at!).toISOString(),
  };
}
