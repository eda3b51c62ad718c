import { FixedThreadPool } from "poolifier-web-worker";
import type { Logger } from "@cellar/shared/logger";
import type { OFFLOAD_TASKS, OffloadTaskName } from "./tasks.ts";

/**
 * Large admitted requests worked on threads of their own (docs/ingestion.md, "Large requests off
 * the event loop"): a 500-span OTLP request is 11-16 MB of garbage and tens of ms of CPU, which on
 * the event loop every other tenant's request waits behind, and whose collections pause them
 * (issue 41). The threads are a poolifier-web-worker pool (web Workers: Bun and Deno); this module
 * adds what the pool does not: tenants take turns for the threads (one job per thread at a time,
 * waiting jobs served round-robin by tenant, as shared/fair-turns.ts serves the event loop), a
 * bound on waiting jobs, and a way back to the event loop. A job the pool cannot take (too many
 * waiting, a worker failed or went silent, the pool closed) answers `undefined`, and the door does
 * the work itself as before: offloading changes where the work runs, never what is answered.
 */
export interface OffloadDeps {
  /** Threads (INGEST_OFFLOAD_WORKERS, >= 1). */
  workers: number;
  /** The worker's module (worker.ts, or its bundle: main.ts picks). */
  workerUrl: URL;
  /** Requests of at least this many bytes are offloaded (INGEST_OFFLOAD_MIN_BYTES); smaller stay on the loop. */
  minBytes: number;
  /** Jobs waiting for a thread beyond this run on the event loop instead (memory stays the request's own). */
  maxWaiting?: number;
  /** A job not answered within this is done on the event loop instead (a worker that hangs or died). */
  jobTimeoutMs?: number;
  logger: Logger;
  /** Each job's outcome (main.ts: /metrics); every job but a ping is observed once. */
  observe?: (task: OffloadTaskName, outcome: "done" | "declined" | "failed" | "timed_out") => void;
  /** The threads (tests give a fake to order jobs); default a poolifier FixedThreadPool of `workers` threads. */
  pool?: OffloadThreads;
}

/** What this module needs of the pool: run a named task on some thread, and stop. */
export interface OffloadThreads {
  execute(data: unknown, name: string): Promise<unknown>;
  destroy(): Promise<void>;
}

type Task<N extends OffloadTaskName> = (typeof OFFLOAD_TASKS)[N];
type Input<N extends OffloadTaskName> = Parameters<Task<N>>[0];
type Output<N extends OffloadTaskName> = Awaited<ReturnType<Task<N>>>;

export interface Offload {
  readonly minBytes: number;
  /**
   * Runs task `name` on a thread, in `tenantId`'s turn for one; resolves undefined when the caller
   * should do the work itself. A task's own thrown error (a bug) is `undefined` too, and logged.
   */
  run<N extends OffloadTaskName>(tenantId: string, name: N, data: Input<N>): Promise<Output<N> | undefined>;
  /** Resolves once every thread answers (start-up), rejects after `timeoutMs` naming why. */
  ready(timeoutMs?: number): Promise<void>;
  /** Jobs running and waiting (a gauge for /metrics and tests). */
  load(): { running: number; waiting: number };
  close(): Promise<void>;
}

interface Waiting {
  name: OffloadTaskName;
  data: unknown;
  tenantId: string;
  /** Resolves the caller once: a result, or undefined (the door does the work). */
  finish: (value: unknown, outcome: "done" | "declined" | "failed" | "timed_out") => void;
}

export function createOffload(deps: OffloadDeps): Offload {
  const maxWaiting = deps.maxWaiting ?? 64;
  const jobTimeoutMs = deps.jobTimeoutMs ?? 10_000;
  let startError: string | null = null;
  const pool: OffloadThreads =
    deps.pool ??
    new FixedThreadPool(deps.workers, deps.workerUrl, {
      errorEventHandler: (e: ErrorEvent) => {
        startError = e.message || "worker error";
        deps.logger.error("offload worker failed", { reason: startError });
      },
      restartWorkerOnError: true,
    });
  let closed = false;
  let running = 0;
  let waitingCount = 0;
  /** Each tenant's waiting jobs in order; `rotation` the tenants with some, in turn order. */
  const waiting = new Map<string, Waiting[]>();
  const rotation: string[] = [];

  /** Takes a job out of its tenant's queue if it is still there (its time ran out before it started). */
  function unqueue(job: Waiting): void {
    const queue = waiting.get(job.tenantId);
    const at = queue?.indexOf(job) ?? -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    waitingCount--;
    if (queue.length === 0) {
      waiting.delete(job.tenantId);
      rotation.splice(rotation.indexOf(job.tenantId), 1);
    }
  }

  function start(job: Waiting): void {
    running++;
    pool
      .execute(job.data, job.name)
      .then(
        (value) => job.finish(value, "done"),
        (err: Error) => {
          deps.logger.warn("offload job failed: done on the event loop", { task: job.name, reason: err?.message });
          job.finish(undefined, "failed");
        },
      )
      .finally(() => {
        running--;
        pump();
      });
  }

  function pump(): void {
    while (!closed && running < deps.workers && rotation.length) {
      const tenant = rotation.shift()!;
      const queue = waiting.get(tenant)!;
      const job = queue.shift()!;
      waitingCount--;
      // A tenant with more waiting goes to the back: one job per tenant per round.
      if (queue.length) rotation.push(tenant);
      else waiting.delete(tenant);
      start(job);
    }
  }

  return {
    minBytes: deps.minBytes,
    run(tenantId, name, data) {
      if (closed || waitingCount >= maxWaiting) {
        deps.observe?.(name, "declined");
        return Promise.resolve(undefined);
      }
      return new Promise((resolve) => {
        let settled = false;
        // Counted from now, waiting included: a thread that hangs gives its job back, and the
        // jobs waiting behind it are given back too rather than wait for it (the door does them).
        const timer = setTimeout(() => {
          unqueue(job);
          deps.logger.warn("offload job timed out: done on the event loop", { task: name, timeoutMs: jobTimeoutMs });
          job.finish(undefined, "timed_out");
        }, jobTimeoutMs);
        const job: Waiting = {
          name,
          data,
          tenantId,
          finish: (value, outcome) => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            if (name !== "ping") deps.observe?.(name, outcome);
            resolve(value as never);
          },
        };
        const queue = waiting.get(tenantId);
        if (queue) queue.push(job);
        else {
          waiting.set(tenantId, [job]);
          rotation.push(tenantId);
        }
        waitingCount++;
        pump();
      });
    },
    async ready(timeoutMs = 10_000) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(startError ?? `no answer from the offload worker within ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        const pings = Array.from({ length: deps.workers }, () => pool.execute(undefined, "ping"));
        await Promise.race([Promise.all(pings), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    load: () => ({ running, waiting: waitingCount }),
    async close() {
      closed = true;
      for (const queue of waiting.values()) for (const job of queue) job.finish(undefined, "declined");
      waiting.clear();
      rotation.length = 0;
      waitingCount = 0;
      await pool.destroy();
    },
  };
}
