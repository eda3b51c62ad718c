import { sourcedParts, type TranscriptSource } from "@cellar/shared/analysis/transcript-source";
import { LRUCache } from "lru-cache";

/**
 * The parts of trace payloads that lean transcript reads took items' content from (the messages
 * and responses their sources point at: transcript-source.ts sourcedParts), kept for the next
 * reads of the same pages (docs/performance.md, "Transcript page read (issue 28, second round)").
 * A page of 100 items references 15-50 payloads and takes a few messages from each; decoding
 * them (inflate, JSON.parse of the whole payload) was most of a read's CPU.
 *
 * Safe to keep: a stored payload is written once and never updated (apps/processor/src/ingest/
 * writer.ts; the backfill of migration 0015 moves the same JSON), so kept parts are the stored
 * ones for as long as the trace exists; a read only looks a trace up here when its own statement
 * returned that trace's row, so a trace retention or a deletion removed is never answered from
 * here. Keyed by tenant and trace pk, filled only from rows a read of that tenant's session
 * fetched. Kept parts are shared between reads: callers never change them (items copy fields).
 *
 * Bounded: at most PAYLOAD_PARTS_BYTES of kept parts (their JSON text length, plus 64 per
 * source), least recently used evicted first. A long session's pages keep 264-368 KB
 * (bench/transcript-read.ts), so the bound holds the pages of about 20 long sessions per
 * platform process; in the heap the parts take about 1.9x what is counted (7.5 MiB counted,
 * 14 MiB of heap for 5,177 bench traces' parts), so about 16 MB per process at most.
 */
export const PAYLOAD_PARTS_BYTES = 8 * 1024 * 1024;

interface Kept {
  parts: Record<string, unknown>;
  sources: Set<TranscriptSource>;
  bytes: number;
}

const cache = new LRUCache<string, Kept>({
  maxSize: PAYLOAD_PARTS_BYTES,
  sizeCalculation: (kept) => kept.bytes,
});

const keyOf = (tenantId: string, tracePk: string) => `${tenantId}/${tracePk}`;

/** Kept parts of an existing trace's payload, if they hold every one of these sources. */
export function keptParts(
  tenantId: string,
  tracePk: string,
  sources: Iterable<TranscriptSource>,
): Record<string, unknown> | undefined {
  const kept = cache.get(keyOf(tenantId, tracePk));
  if (!kept) return undefined;
  for (const s of sources) if (!kept.sources.has(s)) return undefined;
  return kept.parts;
}

/** Keeps the parts of a decoded trace payload these sources read (with those kept before for it). */
export function keepParts(tenantId: string, tracePk: string, payload: unknown, sources: Iterable<TranscriptSource>) {
  if (!payload || typeof payload !== "object") return;
  const key = keyOf(tenantId, tracePk);
  const all = new Set([...(cache.peek(key)?.sources ?? []), ...sources]);
  const parts = sourcedParts(payload, all);
  cache.set(key, { parts, sources: all, bytes: JSON.stringify(parts).length + 64 * all.size });
}

/** Bytes kept now (of PAYLOAD_PARTS_BYTES). */
export const keptBytes = (): number => cache.calculatedSize;

/** Empties the cache (benches and tests that compare reads with and without it). */
export function clearPayloadCache(): void {
  cache.clear();
}
