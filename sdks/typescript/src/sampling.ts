/**
 * Sampling by session (docs/sdks.md): kept when fnv1a32(utf8(session_id)) / 2**32 < rate, the same
 * in every SDK, so a session is wholly in or wholly out whichever SDK sent its parts.
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

export function sessionSampled(sessionId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return fnv1a32(sessionId) / 2 ** 32 < rate;
}
