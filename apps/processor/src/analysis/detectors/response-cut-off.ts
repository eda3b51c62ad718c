import type { DetectorFactory } from "../detector-hooks.ts";
import { cutOff } from "../detectors.ts";

/** `response_cut_off`: a response whose stop reason is of class `length` (stop-reasons.ts). */
export const create: DetectorFactory<"response_cut_off"> = () => ({ call: (c) => cutOff(c) });
