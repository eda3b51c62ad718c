// runBench takes its apps, nats-server and Postgres down however the bench ends, and so frees the
// bench lock (the servers and apps inherit the descriptor `flock` locked: while one runs, the lock
// is held). Each case runs a bench under `flock` on a lock file of its own.
import { expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processTree, signalProcess } from "../../scripts/infra/processes";
import { ROOT } from "./harness";

/** Alive and not a zombie. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function badBench(mode: "throw" | "handler" | "wait", signal?: NodeJS.Signals) {
  const dir = mkdtempSync(join(tmpdir(), "cellar-harness-test-"));
  const lock = join(dir, "bench.lock");
  try {
    const child = spawn("flock", [lock, process.execPath, "run", "test/fixtures/bench-harness-crash.ts", mode], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (c) => (err += c));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const { pids, scratch } = await new Promise<{ pids: number[]; scratch: string }>((resolve, reject) => {
      child.stdout.on("data", (c) => {
        out += c;
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line));
      });
      void exited.then((code) => reject(new Error(`the bench exited ${code} before it started:\n${err}`)));
    });
    expect(pids.every((p) => typeof p === "number" && running(p))).toBe(true);
    child.stdin.write("go\n");
    if (signal) {
      // flock's child: the bench's own process (flock waits for it).
      const [, bench] = processTree(child.pid!);
      process.kill(bench, signal);
    }
    const code = await Promise.race([exited, Bun.sleep(90_000).then(() => "still running")]);
    const left = pids.filter(running);
    const lockFree = spawnSync("flock", ["-n", lock, "true"]).status === 0;
    const scratchLeft = existsSync(scratch);
    // Whatever a failing case left: its servers and child, the bench process and flock.
    for (const p of [...left, ...processTree(child.pid!).slice(1)]) signalProcess(p, "SIGKILL");
    child.kill("SIGKILL");
    if (scratchLeft) rmSync(scratch, { recursive: true, force: true });
    return { code, left, lockFree, scratchLeft, err };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a bench whose body throws stops its child, nats-server and Postgres, frees the lock and exits 1", async () => {
  const r = await badBench("throw");
  expect({ code: r.code, left: r.left, lockFree: r.lockFree, scratchLeft: r.scratchLeft }).toEqual({
    code: 1,
    left: [],
    lockFree: true,
    scratchLeft: false,
  });
  expect(r.err).toContain("the bench failed");
}, 120_000);

test("an error thrown outside the body's promise (an event handler) stops everything too, and exits 1", async () => {
  const r = await badBench("handler");
  expect({ code: r.code, left: r.left, lockFree: r.lockFree, scratchLeft: r.scratchLeft }).toEqual({
    code: 1,
    left: [],
    lockFree: true,
    scratchLeft: false,
  });
  expect(r.err).toContain("JSON Parse error");
}, 120_000);

test("SIGTERM (timeout's signal) and SIGINT (Ctrl-C) stop everything and free the lock", async () => {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    const r = await badBench("wait", signal);
    expect({ signal, code: r.code, left: r.left, lockFree: r.lockFree }).toEqual({
      signal,
      code,
      left: [],
      lockFree: true,
    });
  }
}, 180_000);
