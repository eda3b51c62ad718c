import { decodePayload, inflatePayload } from "@cellar/shared/db/payload-codec";
import { LRUCache } from "lru-cache";

/**
 * Decoded trace payloads a transcript read took items' content from, kept for the next reads of
 * the same pages (docs/performance.md, "Transcript page read (issue 28, second round)").
 *
 * Safe to keep: a stored payload is written once and never updated (apps/processor/src/ingest/
 * writer.ts; the backfill of migration 0015 moves the same JSON), so a cached payload is the
 * stored one for as long as its trace exists; a read only looks a payload up here for a trace
 * whose row its own statement returned, so a trace retention or a deletion removed is never
 * answered from the cache. Keyed by tenant and trace pk (the pk alone is unique; the tenant
 * keeps one tenant's entries apart from another's should pks ever be reused), filled only from
 * rows a read of that tenant's session fetched. Payloads are shared between reads: callers
 * never change them (items copy what they take).
 *
 * Bounded: at most PAYLOAD_CACHE_BYTES of stored JSON text (UTF-8 bytes, as inflated), least
 * recently used evicted first; a payload larger than that is not kept. Decoded objects take
 * about 3x their text in the heap (measured by bench/transcript-read.ts), so about 24 MB per
 * platform process at most.
 */
export const PAYLOAD_CACHE_BYTES = 8 * 1024 * 1024;

const cache = new LRUCache<string, { payload: object; bytes: number }>({
  maxSize: PAYLOAD_CACHE_BYTES,
  sizeCalculation: (entry) => entry.bytes,
});

const keyOf = (tenantId: string, tracePk: string) => `${tenantId}/${tracePk}`;

/** The decoded payload of an existing trace, if a read kept it. */
export function cachedPayload(tenantId: string, tracePk: string): object | undefined {
  return cache.get(keyOf(tenantId, tracePk))?.payload;
}

/**
 * A stored payload decoded (either stored form), kept when it was stored deflated (older jsonb
 * rows come parsed by the driver and are not kept: the backfill moves them).
 */
export function decodeAndKeep(
  tenantId: string,
  tracePk: string,
  row: { payload?: unknown; payload_z?: Uint8Array | null },
): unknown {
  if (!row.payload_z) return decodePayload(row);
  const { payload, bytes } = inflatePayload<object>(row.payload_z);
  if (payload && typeof payload === "object") cache.set(keyOf(tenantId, tracePk), { payload, bytes });
  return payload;
}

/** Empties the cache (tests that compare reads with and without it). */
export function clearPayloadCache(): void {
  cache.clear();
}
