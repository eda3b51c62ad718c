import { expect, test } from "bun:test";
import fc from "fast-check";
import { alignMessages } from "./align.ts";

/** The greedy multiset match as first written (copy per push, shift per match): the reference. */
function referenceGreedy(conversation: string[], request: string[]) {
  let lcp = 0;
  while (lcp < conversation.length && lcp < request.length && conversation[lcp] === request[lcp]) lcp++;
  const a = conversation.slice(lcp);
  const b = request.slice(lcp);
  const positions = new Map<string, number[]>();
  a.forEach((fp, i) => positions.set(fp, [...(positions.get(fp) ?? []), i]));
  const inB = new Set<number>();
  let lastA = -1;
  b.forEach((fp, j) => {
    const i = positions.get(fp)?.shift();
    if (i === undefined) return;
    inB.add(j);
    lastA = Math.max(lastA, i);
  });
  const fresh: number[] = [];
  for (let j = 0; j < b.length; j++) if (!inB.has(j)) fresh.push(lcp + j);
  return { fresh, rewritten: lastA < a.length - 1 };
}

test("past the LCS bound, the greedy alignment of long conversations of repeated messages matches the reference", () => {
  // Over 4,000,000 cells after the common prefix: the greedy path. Few distinct messages: many repeats.
  const messages = (n: number) =>
    fc.array(fc.constantFrom("a", "b", "c", "ok", "hi"), { minLength: n, maxLength: n + 50 });
  fc.assert(
    fc.property(messages(2_100), messages(2_100), (conversation, request) => {
      const c = ["first", ...conversation];
      const r = ["other", ...request];
      expect(alignMessages(c, r)).toEqual(referenceGreedy(c, r));
    }),
    { numRuns: 15 },
  );
});
