import { describe, expect, test } from "bun:test";
import { createFairTurns } from "./fair-turns.ts";
import { nextTurn } from "./steps.ts";

/** Each take's continuation records its name once it runs. */
function taking(take: (tenant: string) => Promise<void>, log: string[]) {
  return (tenant: string, name: string) => take(tenant).then(() => void log.push(name));
}

describe("fair turns (issue 41)", () => {
  test("waiting tenants take turns in rotation; one tenant's continuations keep their order", async () => {
    const turns = createFairTurns();
    const log: string[] = [];
    const run = taking(turns.take, log);
    const all = [run("f", "f1"), run("f", "f2"), run("f", "f3"), run("v", "v1"), run("w", "w1"), run("v", "v2")];
    expect(turns.waiting()).toBe(6);
    await Promise.all(all);
    expect(log).toEqual(["f1", "v1", "w1", "f2", "v2", "f3"]);
    expect(turns.waiting()).toBe(0);
  });

  test("a tenant that comes back to the queue goes behind the tenants already waiting", async () => {
    const turns = createFairTurns();
    const log: string[] = [];
    // f's slices each take the next turn as soon as they ran: a many-item request.
    const slices = async () => {
      for (let i = 1; i <= 4; i++) {
        await turns.take("f");
        log.push(`f${i}`);
      }
    };
    const f = slices();
    await nextTurn(); // f's first slice ran
    const v = turns.take("v").then(() => void log.push("v"));
    await Promise.all([f, v]);
    expect(log.indexOf("v")).toBeLessThanOrEqual(2); // behind at most one more of f's slices
  });

  test("one continuation a turn: other work queued for the event loop runs between any two", async () => {
    const log: string[] = [];
    const turns = createFairTurns();
    const flood = Array.from({ length: 10 }, (_, i) => taking(turns.take, log)("f", `f${i}`));
    // Queued after all ten: plain next-turn yields would run all ten before it (the old behaviour).
    setImmediate(() => log.push("other"));
    await Promise.all(flood);
    expect(log.indexOf("other")).toBe(1);

    const plain: string[] = [];
    const old = Array.from({ length: 10 }, (_, i) => nextTurn().then(() => void plain.push(`f${i}`)));
    setImmediate(() => plain.push("other"));
    await Promise.all(old);
    await nextTurn();
    expect(plain.indexOf("other")).toBe(10);
  });

  test("every take resolves, whatever the interleaving (no continuation lost)", async () => {
    const turns = createFairTurns();
    let done = 0;
    const tenants = ["a", "b", "c", "d"];
    const work = async (tenant: string, n: number) => {
      for (let i = 0; i < n; i++) await turns.take(tenant);
      done += n;
    };
    await Promise.all(Array.from({ length: 40 }, (_, i) => work(tenants[i % 4], 1 + (i % 7))));
    expect(done).toBe(Array.from({ length: 40 }, (_, i) => 1 + (i % 7)).reduce((a, b) => a + b, 0));
    expect(turns.waiting()).toBe(0);
  });
});
