/**
 * Reads JSC's GC log (BUN_JSC_logGC=1) between the marks gc-mark.ts writes. Allocation is read
 * from the heap sizes the log gives: each collection's `START <who> <size>kb` is the heap when it
 * began and every `=> <size>kb` (a collection's end, a full sweep's) what was left after it, so
 * `start - left before it` is what was allocated between the two (within a few KB of the log's own
 * "bytes allocated this cycle" where it prints one; it does not for every collection). A phase
 * ends with a forced full collection (ALLOC-GC .. ALLOC-MARK): its START counts the phase's last
 * allocations, its pause does not count (the bench caused it).
 */
/** Calls `fn` with each line of a child's stderr as it arrives. */
export function onLines(stream: NodeJS.ReadableStream, fn: (line: string) => void): void {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    for (const l of lines) fn(l);
  });
}

export interface GcPhase {
  /** Bytes allocated from the previous mark's collection to this mark's. */
  allocated: number;
  /** Collections the process ran itself (not the forced one). */
  collections: number;
  /** Their pauses summed (the log's `p=` increments), ms. */
  pauseMs: number;
  /** The longest single pause, ms. */
  worstPauseMs: number;
}

export function createGcLogReader() {
  let left: number | null = null;
  let forced = false;
  let phase: GcPhase = empty();
  const phases: GcPhase[] = [];
  return {
    /** One line of the process's stderr; returns the phase a mark closed, if this line is one. */
    line(text: string): GcPhase | undefined {
      if (text === "ALLOC-GC") forced = true;
      else if (text === "ALLOC-MARK") {
        forced = false;
        const done = phase;
        phases.push(done);
        phase = empty();
        return done;
      }
      const start = /: START \S+ (\d+)kb =>/.exec(text);
      if (start) {
        if (left !== null) phase.allocated += (Number(start[1]) - left) * 1024;
        if (!forced) phase.collections++;
      }
      if (!forced)
        for (const p of text.matchAll(/ p=([\d.]+)ms/g)) {
          phase.pauseMs += Number(p[1]);
          phase.worstPauseMs = Math.max(phase.worstPauseMs, Number(p[1]));
        }
      const after = [...text.matchAll(/=> (\d+)kb/g)].at(-1);
      if (after) left = Number(after[1]);
      return undefined;
    },
    phases,
  };
}

function empty(): GcPhase {
  return { allocated: 0, collections: 0, pauseMs: 0, worstPauseMs: 0 };
}
