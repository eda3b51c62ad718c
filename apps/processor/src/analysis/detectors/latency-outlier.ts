import type { DetectorFactory } from "../detector-hooks.ts";
import { latencyFinding } from "../detectors.ts";

/** `latency_outlier`: against the service's latency norms, passed in by the caller (no I/O here). */
export const create: DetectorFactory<"latency_outlier"> = (config) => ({
  call: (c, ctx) => latencyFinding(c, config, ctx.latencyNorms),
});
