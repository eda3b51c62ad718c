/**
 * Sampling by session (docs/sdks.md, "Sampling"): kept when sampleHash(session_id) / 2**32 < rate,
 * the same in every SDK, so a session is wholly in or wholly out whichever SDK sent its parts.
 * sampleHash = fmix32(fnv1a32(utf8(id))): FNV-1a (32 bit) passed through MurmurHash3's 32-bit
 * finalizer, whose full avalanche keeps the rate for ids that differ only in a counter (FNV-1a
 * alone kept 20-80% of `conv-0`..`conv-199` at rate 0.5, depending on the prefix).
 * Vectors every SDK checks: sdks/sampling-vectors.json.
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i];
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** MurmurHash3's fmix32: every input bit flips each output bit with probability ~1/2. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The sampling hash of a session id: fmix32(fnv1a32(utf8(id))), an unsigned 32-bit integer. */
export function sampleHash(sessionId: string): number {
  return fmix32(fnv1a32(sessionId));
}

export function sessionSampled(sessionId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return sampleHash(sessionId) / 2 ** 32 < rate;
}
