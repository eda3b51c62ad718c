import { ThreadWorker } from "poolifier-web-worker";
import { OFFLOAD_TASKS } from "./tasks.ts";

/**
 * The offload worker's entry (pool.ts starts it; scripts/bundle.ts bundles it beside ingest's
 * main.js): the tasks of tasks.ts on a thread with a heap of its own, so a large request's decoding
 * and its garbage neither hold nor pause ingest's event loop.
 */
export default new ThreadWorker(OFFLOAD_TASKS as unknown as Record<string, (data?: unknown) => unknown>);
