// The GC log reader of bench/ingest-alloc.ts, on lines JSC wrote (BUN_JSC_logGC=1, Bun 1.4), and
// on a real process: what it allocates between two marks is what it was made to allocate.
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createGcLogReader, onLines } from "./gc-log";

const LOG = [
  "ALLOC-GC",
  "[GC<0x1>: START M 20109kb => FullCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=1 b=6 i#1:N<CsMsrShDMsm(8)SrbBcs> 2044+0 v=3163kb => 9744kb, p=2.266827ms (max 3.097030), cycle 2.259807ms END]",
  "[GC<0x1>: Full sweep: 15294kb => 6958kb, 1.006845ms]",
  "ALLOC-MARK",
  "Requesting GC because bytes allocated this cycle: 13190944 exceed bytes allowed: 13175874 normal bytes: 11936784 oversized bytes: 1254160 last oversized: 347904",
  "[GC<0x1>: START M 20109kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=1 b=6 i#1:N<CsMsrShDMsm(8)SrbBcs> 2044+0 v=3163kb (C:102 M:0 P1:3061) o=1 b=6 i#3:P<ShMsm(0)CsMsrSrbDBcsCbDomoOWsJw>Pbc => 9744kb, p=2.266827ms (max 3.097030), cycle 2.259807ms END]",
  "GC END!",
  "[GC<0x1>: START M 23828kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=1 b=2 i#1:N<CsMsrShDMsm(3)SrbBcs> 2+3 p=1.460735ms (max 3.097030)...]",
  "[GC<0x1>: M a=159kb hf=0.048 mu=0.571 v=5631kb (C:797 M:0 P1:4833) o=6 b=44 => 7330kb, p=1.313531ms (max 1.460735), cycle 5.956998ms END]",
  "ALLOC-GC",
  "[GC<0x1>: START M 41359kb => FullCollection, a=0kb hf=0.000 mu=0.600 v=0kb o=0 b=6 => 1043kb, p=9.247373ms (max 9.247373), cycle 1.179372ms END]",
  "[GC<0x1>: Full sweep: 35918kb => 1518kb, 4.015334ms]",
  "ALLOC-MARK",
];

test("a phase's allocation is what each collection says started it, else its start less what the one before left; the forced one's pause is not counted", () => {
  const reader = createGcLogReader();
  const closed = LOG.map((l) => reader.line(l)).filter((p) => p !== undefined);
  expect(closed).toHaveLength(2);
  const phase = closed[1]!;
  // The first collection says what it was started by; the two others: their heap sizes.
  expect(phase.allocated).toBe(13190944 + (23828 - 9744 + 41359 - 7330) * 1024);
  expect(phase.collections).toBe(2);
  expect(phase.pauseMs).toBeCloseTo(2.266827 + 1.460735 + 1.313531, 5);
  expect(phase.worstPauseMs).toBeCloseTo(2.266827, 5);
});

test("a process made to allocate a million small arrays between two marks is read as allocating them (and the phase before as nothing); so are a hundred thousand 1 KB strings, whose characters are outside the GC heap", async () => {
  const script = `
    process.on("SIGUSR2", () => { console.error("ALLOC-GC"); Bun.gc(true); console.error("ALLOC-MARK"); });
    const sink = [];
    process.on("SIGUSR1", () => {
      // A million Uint8Arrays of 40 bytes, none kept: 40 MB of storage, plus their cells.
      for (let i = 0; i < 1_000_000; i++) sink[i & 7] = new Uint8Array(40);
      console.error("DONE");
    });
    process.on("SIGHUP", () => {
      // 100,000 strings of 1 KB from JSON.stringify: their characters live outside the GC heap.
      const value = { text: "x".repeat(1000) };
      for (let i = 0; i < 100_000; i++) sink[i & 7] = JSON.stringify(value);
      console.error("DONE");
    });
    console.error("READY");
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["-e", script], {
    env: { ...process.env, BUN_JSC_logGC: "1" },
    stdio: ["ignore", "ignore", "pipe"],
    cwd: join(import.meta.dir),
  });
  const reader = createGcLogReader();
  const waiters: Array<[string, () => void]> = [];
  onLines(child.stderr!, (l) => {
    reader.line(l);
    for (const [i, [word, done]] of waiters.entries())
      if (l === word) {
        waiters.splice(i, 1);
        done();
      }
  });
  const next = (word: string, signal?: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      waiters.push([word, resolve]);
      if (signal) child.kill(signal);
    });
  try {
    await next("READY");
    await next("ALLOC-MARK", "SIGUSR2");
    await next("DONE", "SIGUSR1");
    await next("ALLOC-MARK", "SIGUSR2");
    const phase = reader.phases[1];
    // Each is its cell plus its 40 bytes (about 106 bytes in all on Bun 1.4).
    expect(phase.allocated).toBeGreaterThan(60_000_000);
    expect(phase.allocated).toBeLessThan(200_000_000);
    expect(reader.phases[0].allocated).toBeLessThan(phase.allocated / 10);
    await next("DONE", "SIGHUP");
    await next("ALLOC-MARK", "SIGUSR2");
    expect(reader.phases[2].allocated).toBeGreaterThan(80_000_000);
    expect(reader.phases[2].allocated).toBeLessThan(200_000_000);
  } finally {
    child.kill("SIGKILL");
  }
});
