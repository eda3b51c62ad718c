import { describe, expect, test } from "bun:test";
import type { JetStreamClient } from "@nats-io/jetstream";
import { createLogger } from "@cellar/shared/logger";
import { createTopology } from "@cellar/shared/nats/topology";
import { ActivityCoalescer } from "./coalesce.ts";

/** A fake clock and a JetStream that records puts: (time, subject, ttl seconds). */
function harness(windowSeconds: number, minIntervalMs: number) {
  let clock = 1_000_000;
  const puts: Array<{ at: number; subject: string; ttl: number }> = [];
  const js = {
    publish: async (subject: string, _d: unknown, o: { ttl: string }) =>
      void puts.push({ at: clock, subject, ttl: Number(o.ttl.replace("s", "")) }),
  } as unknown as JetStreamClient;
  const c = new ActivityCoalescer({
    js,
    topology: createTopology("co"),
    windowSeconds,
    logger: createLogger("silent"),
    minIntervalMs,
    now: () => clock,
    tickMs: 50,
  });
  /** Moves the clock in 50 ms ticks, flushing as the timer would. */
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 50) {
      clock += 50;
      await (c as any).flush(clock);
    }
  };
  const expiries = (pk: string) =>
    puts.filter((p) => p.subject.endsWith(`.s.03.${pk}`)).map((p) => p.at + p.ttl * 1000);
  return { c, puts, advance, expiries, now: () => clock };
}

describe("activity put coalescing", () => {
  test("a session written every second is put at most once per interval, and its key expires exactly window after its last write", async () => {
    const h = harness(30, 5000);
    let lastWrite = 0;
    for (let i = 0; i < 20; i++) {
      lastWrite = h.now();
      await h.c.refresh([{ kind: "session", pk: "a", lane: "03" }]);
      await h.advance(1000);
    }
    await h.advance(10_000);
    const sessionPuts = h.puts.filter((p) => p.subject.endsWith(".s.03.a"));
    expect(sessionPuts.length).toBeLessThanOrEqual(5); // 20 writes over 20 s
    for (let i = 1; i < sessionPuts.length; i++)
      expect(sessionPuts[i].at - sessionPuts[i - 1].at).toBeGreaterThanOrEqual(5000);
    // The key that stands last expires at last write + window (never before it).
    const last = h.expiries("a").at(-1)!;
    expect(last).toBeGreaterThanOrEqual(lastWrite + 30_000);
    expect(last - (lastWrite + 30_000)).toBeLessThan(100);
    expect(h.c.size).toEqual({ recent: 0, trailing: 0 });
  });

  test("a write after the interval puts at once; batch and trace keys are never coalesced", async () => {
    const h = harness(30, 5000);
    await h.c.refresh([
      { kind: "session", pk: "a", lane: "03" },
      { kind: "batch", pk: "123", lane: "03" },
    ]);
    await h.c.refresh([
      { kind: "batch", pk: "124", lane: "03" },
      { kind: "trace", pk: "t1", lane: "03" },
    ]);
    expect(h.puts.map((p) => p.subject.split(".").slice(-3).join("."))).toEqual([
      "s.03.a",
      "b.03.123",
      "b.03.124",
      "t.03.t1",
    ]);
    await h.advance(6000);
    await h.c.refresh([{ kind: "session", pk: "a", lane: "03" }]);
    expect(h.puts.length).toBe(5);
    expect(h.puts[4].ttl).toBe(30);
  });

  test("stop sends what is scheduled, still expiring at write + window", async () => {
    const h = harness(30, 5000);
    await h.c.refresh([{ kind: "session", pk: "a", lane: "03" }]);
    await h.advance(1200);
    const write = h.now();
    await h.c.refresh([{ kind: "session", pk: "a", lane: "03" }]);
    expect(h.puts.length).toBe(1);
    await h.c.stop();
    expect(h.puts.length).toBe(2);
    expect(h.puts[1].subject.endsWith(".s.03.a")).toBe(true); // the trailing put keeps the key's lane
    const exp = h.expiries("a")[1];
    expect(exp).toBeGreaterThanOrEqual(write + 30_000);
    expect(exp - (write + 30_000)).toBeLessThan(1000);
  });

  test("off when the window is too short for a trailing put, or when asked", async () => {
    for (const [w, i] of [
      [1, 5000],
      [5, 5000],
      [30, 0],
    ] as const) {
      const h = harness(w, i);
      expect(h.c.enabled).toBe(false);
      await h.c.refresh([{ kind: "session", pk: "a", lane: "03" }]);
      await h.c.refresh([{ kind: "session", pk: "a", lane: "03" }]);
      expect(h.puts.length).toBe(2);
    }
  });

  test("rearm puts the key for the time the session still has, rounded up", async () => {
    const h = harness(30, 5000);
    await h.c.rearm("a", "03", 1200);
    expect(h.puts[0].ttl).toBe(2);
    await h.c.rearm("b", "03", 0);
    expect(h.puts[1].ttl).toBe(1);
    // In the marker's lane; a key of before lanes (lane null) is re-armed as it was.
    await h.c.rearm("c", null, 0);
    expect(h.puts.map((p) => p.subject.split(".").slice(2).join("."))).toEqual(["s.03.a", "s.03.b", "s.c"]);
  });
});
