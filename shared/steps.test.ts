import { describe, expect, test } from "bun:test";
import { runAtOnce, runInTurns, type Steps } from "./steps.ts";

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

  test("a throw inside the steps rejects the run", async () => {
    function* failing(): Steps<void> {
      yield;
      throw new Error("bad body");
    }
    await expect(runInTurns(failing(), 1)).rejects.toThrow("bad body");
  });
});
