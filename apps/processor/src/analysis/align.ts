/** Above this many DP cells the alignment falls back to a greedy multiset match (bounded memory). */
const MAX_LCS_CELLS = 4_000_000;

/**
 * Aligns a request's messages (fingerprints) with the conversation the model saw last.
 * - Plain extension: the request starts with the whole conversation; the rest is fresh.
 * - Truncated history (sliding window, dropped middle): the kept messages are a subsequence of
 *   the conversation, found by longest common subsequence; only what is left over is fresh.
 * - Edited history: the conversation's tail has no match in the request (the app rewrote or
 *   dropped the latest messages); fresh messages are then flagged `rewritten`.
 */
export function alignMessages(conversation: string[], request: string[]): { fresh: number[]; rewritten: boolean } {
  let lcp = 0;
  while (lcp < conversation.length && lcp < request.length && conversation[lcp] === request[lcp]) lcp++;
  if (lcp === conversation.length) return { fresh: range(lcp, request.length), rewritten: false };
  const a = conversation.slice(lcp);
  const b = request.slice(lcp);
  const matched = (a.length + 1) * (b.length + 1) <= MAX_LCS_CELLS ? lcsMatches(a, b) : greedyMatches(a, b);
  const fresh: number[] = [];
  for (let j = 0; j < b.length; j++) if (!matched.inB.has(j)) fresh.push(lcp + j);
  // The conversation's last message not being in the request means the app rewrote recent history.
  const rewritten = matched.lastA < a.length - 1;
  return { fresh, rewritten };
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) out.push(i);
  return out;
}

function lcsMatches(a: string[], b: string[]): { inB: Set<number>; lastA: number } {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const dp = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      dp[i * w + j] = a[i] === b[j] ? dp[(i + 1) * w + j + 1] + 1 : Math.max(dp[(i + 1) * w + j], dp[i * w + j + 1]);
    }
  }
  const inB = new Set<number>();
  let lastA = -1;
  let i = 0,
    j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      inB.add(j);
      lastA = i;
      i++;
      j++;
    } else if (dp[(i + 1) * w + j] >= dp[i * w + j + 1]) i++;
    else j++;
  }
  return { inB, lastA };
}

function greedyMatches(a: string[], b: string[]): { inB: Set<number>; lastA: number } {
  // Positions of each fingerprint in `a`, taken in order by `used` (linear: no copy per push, no
  // shift per match, which were quadratic in a long conversation of repeated messages).
  const positions = new Map<string, number[]>();
  a.forEach((fp, i) => {
    const list = positions.get(fp);
    if (list) list.push(i);
    else positions.set(fp, [i]);
  });
  const used = new Map<string, number>();
  const inB = new Set<number>();
  let lastA = -1;
  b.forEach((fp, j) => {
    const list = positions.get(fp);
    const k = used.get(fp) ?? 0;
    if (!list || k >= list.length) return;
    used.set(fp, k + 1);
    inB.add(j);
    lastA = Math.max(lastA, list[k]);
  });
  return { inB, lastA };
}
