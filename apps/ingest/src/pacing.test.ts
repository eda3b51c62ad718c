import { expect, test } from "bun:test";
import { createRefusalPacing } from "./pacing.ts";

/** How long `pace` took to resolve, in ms. */
async function timed(p: Promise<void>): Promise<number> {
  const t0 = performance.now();
  await p;
  return performance.now() - t0;
}

test("a 429 is answered at once, unless the credential came back before its Retry-After: then when it ends", async () => {
  let t = 1_000_000;
  const pacing = createRefusalPacing({ maxHoldMs: 300, now: () => t });
  expect(await timed(pacing.pace("Bearer f", 1, 100))).toBeLessThan(50); // first refusal
  t += 100; // back 100 ms later, told to wait 1 s: held (at most maxHoldMs)
  const held = pacing.pace("Bearer f", 1, 100);
  expect(pacing.held()).toBe(1);
  expect(await timed(held)).toBeGreaterThanOrEqual(250);
  expect(pacing.held()).toBe(0);
  expect(await timed(pacing.pace("Bearer v", 1, 100))).toBeLessThan(50); // another credential: at once
  t += 5_000; // it waited as told: at once
  expect(await timed(pacing.pace("Bearer f", 1, 100))).toBeLessThan(50);
});

test("bounded: per credential, in bytes, and a body of unknown length is never held", async () => {
  let t = 1_000_000;
  const pacing = createRefusalPacing({ maxHoldMs: 300, maxHeldPerCredential: 2, maxHeldBytes: 1_000, now: () => t });
  await pacing.pace("Bearer f", 1, 0);
  t += 10;
  const a = pacing.pace("Bearer f", 1, 100);
  const b = pacing.pace("Bearer f", 1, 100);
  expect(pacing.held()).toBe(2);
  expect(await timed(pacing.pace("Bearer f", 1, 100))).toBeLessThan(50); // a third: at once
  expect(await timed(pacing.pace("Bearer f", 1, null))).toBeLessThan(50); // chunked body
  await pacing.pace("Bearer g", 1, 0);
  expect(await timed(pacing.pace("Bearer g", 1, 2_000))).toBeLessThan(50); // over the bytes bound
  await Promise.all([a, b]);
  expect(pacing.held()).toBe(0);
});

test("the Retry-After ends remembered are bounded; expired ones make room", async () => {
  let t = 1_000_000;
  const pacing = createRefusalPacing({ maxHoldMs: 300, maxTracked: 2, now: () => t });
  await pacing.pace("a", 1, 0);
  await pacing.pace("b", 1, 0);
  await pacing.pace("c", 1, 0); // not remembered: the map is full of live ends
  t += 10;
  expect(await timed(pacing.pace("c", 1, 0))).toBeLessThan(50);
  const a = pacing.pace("a", 1, 0);
  expect(pacing.held()).toBe(1);
  await a;
  t += 5_000; // every end passed: a new credential is remembered again
  await pacing.pace("d", 1, 0);
  t += 10;
  const d = pacing.pace("d", 1, 0);
  expect(pacing.held()).toBe(1);
  await d;
});

test("a burst of held answers comes due one at a time, a gap apart, each within its bound", async () => {
  const maxHoldMs = 200;
  const spreadMs = 50;
  const pacing = createRefusalPacing({ maxHoldMs, maxHeldPerCredential: 4, spreadMs });
  await pacing.pace("Bearer f", 1, 0); // first refusal: told to wait 1 s
  const t0 = performance.now();
  const answered: number[] = [];
  // Four connections back at once, as a flooder's are: held, and let out a gap apart (together
  // they came back together, once a second, a burst of refusals for other tenants to wait behind).
  await Promise.all(
    [0, 1, 2, 3].map((i) =>
      pacing.pace("Bearer f", 1, 0).then(() => {
        answered[i] = performance.now() - t0;
      }),
    ),
  );
  const sorted = [...answered].sort((a, b) => a - b);
  for (let i = 1; i < sorted.length; i++) expect(sorted[i] - sorted[i - 1]).toBeGreaterThanOrEqual(spreadMs - 5);
  // The k-th held goes at most maxHoldMs plus a gap for each held before it.
  for (const [k, at] of answered.entries()) expect(at).toBeLessThan(maxHoldMs + k * spreadMs + 40);
  expect(sorted[0]).toBeGreaterThanOrEqual(maxHoldMs - 10);
  expect(pacing.held()).toBe(0);
});
