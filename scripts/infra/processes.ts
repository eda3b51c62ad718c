/** Signals and process-tree helpers for fault injection (Linux: reads /proc). */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Sends a signal; a process that is already gone is not an error. */
export function signalProcess(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

/** Resolves when the child has exited (at once if it already has). */
export function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => child.once("exit", () => res()));
}

/** SIGTERM (a graceful stop), SIGKILL after `graceMs`; resolves once the child has exited. */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const exited = waitForExit(child);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), graceMs).unref();
  }
  return exited;
}

/** `pid` and every descendant, parents first. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** The kernel's state letter for a process (`T` = stopped), or null when it is gone. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}
