import { expect, test } from "bun:test";
import { createTenantPool } from "./pool.ts";

/** A gate per item: the item runs until its gate opens. */
function gated() {
  const running = new Set<string>();
  const gates = new Map<string, () => void>();
  let peak = 0;
  const item = (name: string) => () =>
    new Promise<string>((resolve) => {
      running.add(name);
      peak = Math.max(peak, running.size);
      gates.set(name, () => {
        running.delete(name);
        resolve(name);
      });
    });
  return { running, gates, item, peak: () => peak };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

test("never more than the process's items in flight, nor more than a tenant's share for one tenant", async () => {
  const pool = createTenantPool({ concurrency: 4, tenantConcurrency: 2 });
  const g = gated();
  const a = Array.from({ length: 10 }, (_, i) => pool.run("A", g.item(`a${i}`)));
  await tick();
  expect([...g.running].sort()).toEqual(["a0", "a1"]);
  const b = Array.from({ length: 10 }, (_, i) => pool.run("B", g.item(`b${i}`)));
  const c = Array.from({ length: 10 }, (_, i) => pool.run("C", g.item(`c${i}`)));
  await tick();
  // B gets its share at once although A has 8 more waiting; C waits for a process slot only.
  expect([...g.running].sort()).toEqual(["a0", "a1", "b0", "b1"]);
  g.gates.get("a0")!();
  await tick();
  // The freed slot goes to the item that waited longest in the process queue: C's, not A's third.
  expect(g.running.has("c0")).toBe(true);
  expect(g.running.has("a2")).toBe(false);
  while (g.running.size > 0) {
    for (const name of [...g.running]) g.gates.get(name)!();
    await tick();
    await tick();
  }
  expect((await Promise.all([...a, ...b, ...c])).length).toBe(30);
  expect(g.peak()).toBe(4);
  expect(pool.tenants).toBe(0); // no tenant limiter kept once its items are done
});

test("a failing item neither holds nor fails the others, and frees its slot", async () => {
  const pool = createTenantPool({ concurrency: 1, tenantConcurrency: 1 });
  const failing = pool.run("A", async () => {
    throw new Error("judge down");
  });
  const next = pool.run("A", async () => "judged");
  await expect(failing).rejects.toThrow("judge down");
  expect(await next).toBe("judged");
  expect(pool.active).toBe(0);
});
