import { readdirSync, readFileSync } from "node:fs";

/** utime + stime (own, and reaped children) of a process in seconds, from /proc; null if gone. */
export function procStat(pid: number): { ppid: number; own: number; children: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      ppid: Number(f[1]),
      own: (Number(f[11]) + Number(f[12])) / 100,
      children: (Number(f[13]) + Number(f[14])) / 100,
    };
  } catch {
    return null;
  }
}

/**
 * The machine's CPU time so far in clock ticks (/proc/stat's first line): `steal` is time a
 * virtual machine's CPUs were ready but the host ran something else, which no process here sees
 * as its own and which shows in a probe as a lag off the CPU; `total` is every state's.
 */
export function machineCpu(): { steal: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal guest guest_nice (guest is counted in user).
  return { steal: f[7] ?? 0, total: f.slice(0, 8).reduce((a, b) => a + b, 0) };
}

/** Steal as a % of the machine's CPU time between two machineCpu() readings. */
export const stealShare = (a: ReturnType<typeof machineCpu>, b: ReturnType<typeof machineCpu>) =>
  b.total > a.total ? (100 * (b.steal - a.steal)) / (b.total - a.total) : 0;

export type RunQueueWait = { seconds: number; runs: number };

/**
 * How long a process's threads waited for a core (runnable, not running) and how many times they
 * were put on one, so far, from /proc/<pid>/task/<tid>/schedstat (run_delay ns, timeslices);
 * threads that ended are not counted. Zeros if the process is gone.
 */
export function runQueueWait(pid: number): RunQueueWait {
  let ns = 0;
  let runs = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [, delay, count] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ");
        ns += Number(delay);
        runs += Number(count);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // The process is gone.
  }
  return { seconds: ns / 1e9, runs };
}

/** The wait between two runQueueWait() readings of one process. */
export const waitSince = (a: RunQueueWait, b: RunQueueWait): RunQueueWait => ({
  seconds: b.seconds - a.seconds,
  runs: b.runs - a.runs,
});

/** The postmaster of the cluster whose data directory is `dataDir` (its postmaster.pid). */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    return Number(readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0]) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds so far of named processes; `postgres` counts the postmaster, every live backend
 * and the children it reaped (ended connections), so a pool's churn is not lost.
 */
export function cpuByProcess(
  named: Record<string, Array<number | undefined>>,
  postmaster?: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pids] of Object.entries(named))
    out[name] = pids.reduce<number>((s, pid) => s + (pid ? (procStat(pid)?.own ?? 0) : 0), 0);
  if (postmaster) {
    const pm = procStat(postmaster);
    let pg = (pm?.own ?? 0) + (pm?.children ?? 0);
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      const st = procStat(Number(d));
      if (st?.ppid === postmaster) pg += st.own;
    }
    out.postgres = pg;
  }
  return out;
}

export function cpuDelta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(b)) out[k] = b[k] - (a[k] ?? 0);
  return out;
}

/** Nearest-rank percentile of an ascending array. */
export const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : NaN;

/** A field of Postgres COPY text format: backslash, tab, newline and CR escaped; null as \N. */
export function copyField(v: string | null): string {
  if (v === null) return "\\N";
  return v.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r");
}
