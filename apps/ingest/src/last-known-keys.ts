import { hashKey, type ResolvedKey } from "@cellar/shared/auth/keys";

/** How long a key seen valid may still be honoured while Postgres cannot be asked (docs/reliability.md). */
export const LAST_KNOWN_MAX_AGE_MS = 10 * 60_000;
/** Bound on remembered keys per instance (~300 bytes each). */
export const LAST_KNOWN_MAX_ENTRIES = 10_000;

/**
 * Keys this instance resolved successfully, for use only when Postgres does not answer: ingest
 * then keeps taking data for known tenants through a Postgres restart or outage (JetStream is
 * all it needs to store it), instead of answering 503 to everyone. A key revoked while Postgres
 * was down keeps working until Postgres answers again, at most `maxAgeMs` after it was last seen.
 * Remembered by hash, never the key itself; oldest entries dropped first.
 */
export function createLastKnownKeys(opts: { maxAgeMs?: number; maxEntries?: number; now?: () => number } = {}) {
  const maxAge = opts.maxAgeMs ?? LAST_KNOWN_MAX_AGE_MS;
  const maxEntries = opts.maxEntries ?? LAST_KNOWN_MAX_ENTRIES;
  const now = opts.now ?? Date.now;
  const seen = new Map<string, { key: ResolvedKey; at: number }>();
  return {
    remember(presented: string, key: ResolvedKey): void {
      const h = hashKey(presented);
      seen.delete(h); // re-insert: Map order is then oldest-seen first
      seen.set(h, { key, at: now() });
      if (seen.size > maxEntries) seen.delete(seen.keys().next().value!);
    },
    /** A valid key seen lately, or null. */
    recall(presented: string): ResolvedKey | null {
      const hit = seen.get(hashKey(presented));
      return hit && now() - hit.at <= maxAge ? hit.key : null;
    },
    /** A key found revoked or unknown is forgotten at once. */
    forget(presented: string): void {
      seen.delete(hashKey(presented));
    },
    get size() {
      return seen.size;
    },
  };
}
