/**
 * A mergeable latency histogram over fixed log-scale buckets: bucket 0 holds durations under
 * 1 ms, bucket i (1 .. 78) holds [2^((i-1)/4), 2^(i/4)) ms, bucket 79 everything from 2^19.5 ms
 * (~12 min) up. Four buckets per doubling: a percentile read back is the bucket's geometric
 * middle, within 9% of the true value. Histograms of any buckets add element by element, so the
 * p50/p95 of any window come from summed counts, never from raw rows. The processor's rollups
 * write these counts (apps/processor/src/rollups) and the platform's overview reads percentiles
 * from them (apps/platform/src/query/overview.ts): one bucket layout for both.
 */
export const HISTOGRAM_BUCKETS = 80;
const PER_DOUBLING = 4;

export function emptyHistogram(): number[] {
  return new Array(HISTOGRAM_BUCKETS).fill(0);
}

export function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(HISTOGRAM_BUCKETS - 1, 1 + Math.floor(Math.log2(ms) * PER_DOUBLING));
}

export function addTo(hist: number[], ms: number): void {
  hist[bucketOf(ms)]++;
}

export function merge(into: number[], other: readonly number[]): number[] {
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) into[i] += other[i] ?? 0;
  return into;
}

/** The p-th percentile (0..100) read from counts: the bucket's geometric middle; null when empty. */
export function percentileOf(hist: readonly number[], p: number): number | null {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    seen += hist[i];
    if (seen >= rank) return i === 0 ? 0.5 : 2 ** ((i - 0.5) / PER_DOUBLING);
  }
  return null;
}
