import type { DetectorFactory } from "../detector-hooks.ts";
import { refusalFinding } from "../detectors.ts";

/** `refusal`: an explicit refusal field, stop reason or phrasing (refusal.ts). */
export const create: DetectorFactory<"refusal"> = (config) => ({ call: (c) => refusalFinding(c, config) });
