import type { DetectorFactory } from "../detector-hooks.ts";
import { errorEvent } from "../detectors.ts";

/** `error_event`: an event at or above `minSeverity`. */
export const create: DetectorFactory<"error_event"> = (config) => ({
  event: (e) => {
    const f = errorEvent(e, config);
    return f ? [f] : [];
  },
});
