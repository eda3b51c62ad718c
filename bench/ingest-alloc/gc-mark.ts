/**
 * Preloaded into a process bench/ingest-alloc.ts measures (`bun --preload`), run with
 * BUN_JSC_logGC=1: on SIGUSR2 it writes ALLOC-GC, collects the whole heap (Bun.gc(true), synchronous)
 * and writes ALLOC-MARK, both to stderr beside JSC's GC log. Between two marks the GC log then
 * holds every byte the process allocated (gc-log.ts), each phase starting from a collected heap.
 */
process.on("SIGUSR2", () => {
  console.error("ALLOC-GC");
  Bun.gc(true);
  console.error("ALLOC-MARK");
});
