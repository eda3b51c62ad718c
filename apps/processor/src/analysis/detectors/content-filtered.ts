import type { DetectorFactory } from "../detector-hooks.ts";
import { contentFiltered } from "../detectors.ts";

/** `content_filtered`: a response whose stop reason is of class `content_filter`. */
export const create: DetectorFactory<"content_filtered"> = () => ({ call: (c) => contentFiltered(c) });
