/**
 * Reads JSC's GC log (BUN_JSC_logGC=1) between the marks gc-mark.ts writes. A collection the
 * allocation started is preceded by "Requesting GC because bytes allocated this cycle: N": N is
 * what was allocated since the collection before, strings' and buffers' memory outside the heap
 * included (JSC counts it to start collections; the heap sizes the log prints leave it out: a
 * million 1 KB JSON.stringify results move them by almost nothing). A collection started
 * otherwise (a timer's, the forced one at a mark) counts what its heap sizes show: `START <who>
 * <size>kb` less what the one before left (`=> <size>kb`, a collection's end or a full sweep's),
 * which misses that cycle's strings (the phase's last cycle always ends so). So a phase's figure is
 * a lower bound: on Bun 1.4.5 the same code read up to ~30% apart between runs (how many of a
 * phase's collections a timer starts varies). Good for where the bytes go and orders of magnitude,
 * not for a 10% change in one run. The forced collection's pause does not count (the bench caused it).
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
  let requested: number | null = null;
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
      const requesting = /^Requesting GC because bytes allocated this cycle: (\d+)/.exec(text);
      if (requesting) requested = Number(requesting[1]);
      const start = /: START \S+ (\d+)kb =>/.exec(text);
      if (start) {
        if (requested !== null) phase.allocated += requested;
        else if (left !== null) phase.allocated += Math.max(0, Number(start[1]) - left) * 1024;
        requested = null;
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
