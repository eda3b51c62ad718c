import { expect, test } from "bun:test";
import { DEFAULT_PRICE_BOOK } from "@cellar/shared/pricing/table";
import { SessionAnalyzer } from "../analysis/session.ts";
import { DEFAULT_HISTORY_PAGING } from "./store.ts";
import { emptyHistory, extension, FoldCache, type FoldEntry } from "./fold-cache.ts";

/** A kept fold whose analyzer claims `bytes` (its estimate, doubled by the cache, plus 1 KB). */
function entry(bytes: number): FoldEntry {
  const analyzer = new SessionAnalyzer();
  Object.defineProperty(analyzer, "approxBytes", { value: bytes });
  return {
    analyzer,
    history: emptyHistory(),
    maturationCount: 1,
    contextKey: "k",
    prices: DEFAULT_PRICE_BOOK,
    digests: true,
    streamed: false,
  };
}

test("the fold cache keeps folds within its budget, the least recently put first out", () => {
  const cache = new FoldCache(100_000);
  for (const pk of ["a", "b", "c", "d", "e", "f", "g", "h", "i"]) cache.put(pk, entry(5_000)); // 11 KB each
  expect(cache.size).toBe(9);
  cache.put("j", entry(5_000));
  expect(cache.size).toBe(9);
  expect(cache.take("a")).toBeUndefined();
  // Put again: moves to the back.
  cache.put("b", cache.take("b")!);
  cache.put("k", entry(5_000));
  expect(cache.take("c")).toBeUndefined();
  expect(cache.take("b")).toBeDefined();
  // Taken is gone until put back; a fold over an eighth of the budget is not kept.
  expect(cache.take("b")).toBeUndefined();
  cache.put("big", entry(6_000));
  expect(cache.take("big")).toBeUndefined();
});

test("an extension is only later traces and events, none gone, none awaiting messages", () => {
  const folded = { ...emptyHistory(), traces: new Set(["t1", "t2"]), events: new Set(["e1"]), lastMs: 1_000 };
  const now = (traces: Array<[string, number, boolean?]>, events: Array<[string, number, boolean?]>) => ({
    traces: traces.map(([id, startMs, awaits]) => ({ id, startMs, awaits: Boolean(awaits), jsonBytes: 100 })),
    events: events.map(([id, ms, message]) => ({ id, ms, message: Boolean(message) })),
  });
  const p = DEFAULT_HISTORY_PAGING;
  const old: Array<[string, number]> = [
    ["t1", 0],
    ["t2", 1_000],
  ];
  expect(
    extension(
      folded,
      now(
        [...old, ["t3", 1_001]],
        [
          ["e1", 500],
          ["e2", 2_000],
        ],
      ),
      p,
    ),
  ).toEqual({
    traces: ["t3"],
    events: ["e2"],
  });
  expect(extension(folded, now(old, [["e1", 500]]), p)).toEqual({ traces: [], events: [] });
  // Not after the fold's last time (a tie included), a folded one gone, a call waiting for its messages.
  expect(extension(folded, now([...old, ["t3", 1_000]], [["e1", 500]]), p)).toBeNull();
  expect(
    extension(
      folded,
      now(old, [
        ["e1", 500],
        ["e2", 999],
      ]),
      p,
    ),
  ).toBeNull();
  expect(
    extension(
      folded,
      now(
        [
          ["t2", 1_000],
          ["t3", 2_000],
        ],
        [["e1", 500]],
      ),
      p,
    ),
  ).toBeNull();
  expect(extension(folded, now(old, []), p)).toBeNull();
  expect(extension(folded, now([...old, ["t3", 2_000, true]], [["e1", 500]]), p)).toBeNull();
  expect(
    extension(
      folded,
      now(old, [
        ["e1", 500],
        ["e2", 2_000, true],
      ]),
      p,
    ),
  ).toBeNull();
  // More than a page of new traces: folded whole (streamed).
  expect(
    extension(folded, now([...old, ["t3", 2_000], ["t4", 3_000]], [["e1", 500]]), { ...p, tracesPerBatch: 1 }),
  ).toBeNull();
  // A fold that saw a call rebuilt from message events is never continued.
  expect(extension({ ...folded, plain: false }, now(old, [["e1", 500]]), p)).toBeNull();
});
