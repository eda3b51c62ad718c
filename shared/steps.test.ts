import { describe, expect, test } from "bun:test";
import { nextTurn, runAtOnce, runInTurns, type Steps, sliceClock } from "./steps.ts";

/** `n` steps, each recording its index in `log`; returns how many ran. */
function* counting(n: number, log: string[]): Steps<number> {
  for (let i = 0; i < n; i++) {
    log.push(`step ${i}`);
    yield;
  }
  return n;
}

describe("steps", () => {
  test("runAtOnce runs every step in this turn and returns the result", () => {
    const log: string[] = [];
    expect(runAtOnce(counting(120, log))).toBe(120);
    expect(log.length).toBe(120);
  });

  test("runInTurns lets other work run between slices of perTurn steps", async () => {
    const log: string[] = [];
    // Another request's work, queued as the event loop queues I/O: it runs at the first yield.
    setImmediate(() => log.push("other"));
    expect(await runInTurns(counting(120, log), 50)).toBe(120);
    expect(log.indexOf("other")).toBe(50);
  });

  test("runInTurns also yields once a slice ran its time budget (a loaded machine's slow steps)", async () => {
    const log: string[] = [];
    let clock = 0;
    // Each step takes 1 ms of the clock: with a 2.5 ms budget a slice is 3 steps, not 50.
    function* slow(n: number): Steps<number> {
      for (let i = 0; i < n; i++) {
        clock += 1;
        log.push(`step ${i}`);
        yield;
      }
      return n;
    }
    setImmediate(() => log.push("other"));
    expect(await runInTurns(slow(120), 50, nextTurn, 2.5, () => clock)).toBe(120);
    expect(log.indexOf("other")).toBe(3);
  });

  test("sliceClock: a yield before every perTurn-th item, or sooner once the budget passed", async () => {
    let clock = 0;
    const order: string[] = [];
    const run = async (items: number[], costMs: (i: number) => number, perTurn: number, budget: number) => {
      const due = sliceClock(perTurn, budget, () => clock);
      for (const i of items) {
        if (due()) {
          order.push("|");
          await nextTurn();
        }
        clock += costMs(i);
        order.push(String(i));
      }
    };
    await run([0, 1, 2, 3, 4, 5, 6], () => 0, 3, 10);
    expect(order.join(" ")).toBe("0 1 2 | 3 4 5 | 6");
    order.length = 0;
    // Item 2 is slow: the slice ends after it, and the budget restarts after the yield.
    await run([0, 1, 2, 3, 4, 5, 6, 7], (i) => (i === 2 ? 5 : 0), 50, 4);
    expect(order.join(" ")).toBe("0 1 2 | 3 4 5 6 7");
  });

  test("a throw inside the steps rejects the run", async () => {
    function* failing(): Steps<void> {
      yield;
      throw new Error("bad body");
    }
    await expect(runInTurns(failing(), 1)).rejects.toThrow("bad body");
  });
});
