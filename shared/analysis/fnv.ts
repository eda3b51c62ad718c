/**
 * FNV-1a 64 of a string's UTF-16 code units as [high, low] 32-bit halves: the hash behind
 * `stableId16` (shared/spans.ts: span ids, transcript item ids, finding fingerprints) and the
 * maturation's transcript row digests. In four 16-bit limbs: integer multiplies only, where the
 * 32-bit-halves form divides a double per character (about 2x faster; fnv.test.ts checks the two
 * equal, so every id keeps its value).
 */
export function fnv1a64(text: string): [number, number] {
  // 0xcbf29ce484222325, low limb first; the prime 2^40 + 0x1b3 multiplies as 0x1b3 plus a shift.
  let v0 = 0x2325,
    v1 = 0x8422,
    v2 = 0x9ce4,
    v3 = 0xcbf2;
  for (let i = 0; i < text.length; i++) {
    v0 ^= text.charCodeAt(i);
    const t0 = v0 * 0x1b3;
    let t1 = v1 * 0x1b3;
    let t2 = v2 * 0x1b3 + (v0 << 8);
    const t3 = v3 * 0x1b3 + (v1 << 8);
    t1 += t0 >>> 16;
    v0 = t0 & 0xffff;
    t2 += t1 >>> 16;
    v1 = t1 & 0xffff;
    v3 = (t3 + (t2 >>> 16)) & 0xffff;
    v2 = t2 & 0xffff;
  }
  return [((v3 << 16) | v2) >>> 0, ((v1 << 16) | v0) >>> 0];
}
