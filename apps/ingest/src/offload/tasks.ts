import { loadOtlpSchemas } from "@cellar/shared/otlp/decode";
import { buildBatch } from "../batch.ts";
import { buildOtlp } from "../otlp/items.ts";

/**
 * What the offload worker can do (worker.ts registers these; pool.ts calls them by name): each
 * door's own work on a request once read, as a plain function of structured-cloneable data that
 * reads no clock, connection or global of the host (the job carries all of it). Each lives beside
 * its door (otlp/items.ts, batch.ts), which answers from its result as from its own work.
 */

/** The worker's tasks by name (worker.ts registers them; the pool calls them by name). */
export const OFFLOAD_TASKS = {
  otlp: buildOtlp,
  batch: buildBatch,
  /**
   * The start-up probe (pool.ts `ready`): the worker loaded its modules and the OTLP .proto files
   * (read from beside the module: a bundle that left them behind fails here, at start).
   */
  ping: async (): Promise<"pong"> => {
    loadOtlpSchemas();
    return "pong";
  },
} as const;
export type OffloadTaskName = keyof typeof OFFLOAD_TASKS;
