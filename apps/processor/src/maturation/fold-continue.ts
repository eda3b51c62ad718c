import type postgres from "postgres";
import type { PriceBook } from "@cellar/shared/pricing/table";
import { NeedsPayload } from "../analysis/chain.ts";
import { feedHistory, type SessionAnalyzer } from "../analysis/session.ts";
import type { LatencyNorms } from "../analysis/detectors.ts";
import { extension, historyKeys, recordingFeed, type FoldCache, type FoldEntry } from "./fold-cache.ts";
import { feedInOrder, loadHistoryExtensions, type HistoryPaging, type SessionRow } from "./store.ts";

/**
 * Continues the kept folds of a chunk's due sessions whose history only grew since (fold-cache.ts):
 * each is fed its new traces and events and finished (`finishFold`, as a whole fold is). Returns
 * the sessions left to fold whole: those without a kept fold, or whose fold could not be continued
 * exactly. Three statements for the chunk (the keys, then the new traces and events).
 */
export async function continueFolds(
  cache: FoldCache | undefined,
  tx: postgres.TransactionSql,
  due: SessionRow[],
  o: {
    paging: HistoryPaging;
    streamed: Set<string>;
    pricesOf: (tenantId: string) => PriceBook;
    foldContext: (row: SessionRow) => Promise<{ key: string; latencyNorms?: LatencyNorms }>;
    finishFold: (row: SessionRow, analyzer: SessionAnalyzer, fold: FoldEntry) => Promise<void>;
  },
): Promise<Set<string>> {
  const whole = new Set(due.map((r) => r.id));
  if (!cache) return whole;
  const taken = new Map<string, { row: SessionRow; entry: FoldEntry }>();
  for (const row of due) {
    const entry = cache.take(row.id);
    if (entry) taken.set(row.id, { row, entry });
  }
  if (taken.size === 0) return whole;
  const keys = await historyKeys(tx, [...taken.keys()]);
  const wanted = new Map<string, { traces: string[]; events: string[] }>();
  const norms = new Map<string, LatencyNorms | undefined>();
  for (const [id, { row, entry }] of taken) {
    const ctx = await o.foldContext(row);
    const same =
      entry.maturationCount === row.maturation_count &&
      entry.contextKey === ctx.key &&
      entry.prices === o.pricesOf(row.tenant_id) &&
      entry.streamed === o.streamed.has(id);
    const ext = same ? extension(entry.history, keys.get(id)!, o.paging) : null;
    if (!ext) {
      cache.stats.refused++;
      taken.delete(id);
      continue;
    }
    wanted.set(id, ext);
    norms.set(id, ctx.latencyNorms);
  }
  if (wanted.size === 0) return whole;
  // Digest-fed and payload-fed folds read their new traces the way they were fed.
  const read = async (digests: boolean) => {
    const ids = new Map([...wanted].filter(([id]) => taken.get(id)!.entry.digests === digests));
    return ids.size ? loadHistoryExtensions(tx, ids, { digests }) : new Map();
  };
  const [fromDigests, fromPayloads] = await Promise.all([read(true), read(false)]);
  for (const [id, { row, entry }] of taken) {
    const { traces, events } = (entry.digests ? fromDigests : fromPayloads).get(id)!;
    entry.analyzer.setLatencyNorms(norms.get(id));
    try {
      (entry.streamed ? feedInOrder : feedHistory)(recordingFeed(entry.analyzer, entry.history), traces, events);
    } catch (err) {
      // Half fed: dropped, and the session folded whole (from its payloads if it needs them).
      if (!(err instanceof NeedsPayload)) throw err;
      cache.stats.refused++;
      continue;
    }
    cache.stats.continued++;
    whole.delete(id);
    await o.finishFold(row, entry.analyzer, entry);
  }
  return whole;
}
