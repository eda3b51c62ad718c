import type { DetectorFactory } from "../detector-hooks.ts";
import { contextWindowNear } from "../detectors.ts";

/** `context_window_near`: prompt tokens at or above `share` of the model's context window. */
export const create: DetectorFactory<"context_window_near"> = (config) => ({
  call: (c) => contextWindowNear(c, config),
});
