import type { DetectorFactory } from "../detector-hooks.ts";
import { emptyResponse } from "../detectors.ts";

/** `empty_response`: a response with nothing in it. */
export const create: DetectorFactory<"empty_response"> = () => ({ call: (c) => emptyResponse(c) });
