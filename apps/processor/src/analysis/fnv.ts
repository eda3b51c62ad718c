import { hex8 } from "@cellar/shared/spans";

/**
 * The hash behind stable ids (shared/spans.ts `stableId16`), for the maturation's hot paths:
 * transcript item ids and transcript row digests, per item of every maturation.
 */

/**
 * FNV-1a 64 of a string's UTF-16 code units as [high, low] 32-bit halves (stableId16's hash), in
 * four 16-bit limbs: integer multiplies only, where stableId16's halves divide a double per
 * character (2x faster; fnv.test.ts checks them equal).
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

/** `stableId16(...parts)`: the same 16 hex digits. */
export function stableHex16(...parts: string[]): string {
  const [hi, lo] = fnv1a64(parts.join("\u0000"));
  return hex8(hi) + hex8(lo);
}
