import { type ChildProcess, spawn } from "node:child_process";
import { loadavg } from "node:os";

/**
 * A CPU hog for chaos runs on a loaded machine (issue 41: recovery must not need idle cores):
 * busy-looping child processes, enough to hold the 1-minute load average near `targetLoad`
 * (what already runs counts: on a busy machine fewer are added, at least one), each ending by
 * itself after `maxMs` so none outlives a crashed test. `stop()` kills them.
 */
export function startCpuHog(opts: { targetLoad?: number; maxMs?: number; workers?: number } = {}) {
  const target = opts.targetLoad ?? 10;
  const workers =
    opts.workers ?? Number(process.env.CHAOS_HOG_WORKERS || Math.max(1, Math.round(target - loadavg()[0])));
  const maxMs = opts.maxMs ?? 10 * 60_000;
  const burn = `const end = Date.now() + ${maxMs}; let x = 0; while (Date.now() < end) { for (let i = 0; i < 1e6; i++) x += i; }`;
  const children: ChildProcess[] = Array.from({ length: workers }, () =>
    spawn(process.execPath, ["-e", burn], { stdio: "ignore" }),
  );
  return {
    workers,
    async stop(): Promise<void> {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once("exit", () => resolve());
              c.kill("SIGKILL");
            }),
        ),
      );
    },
  };
}
