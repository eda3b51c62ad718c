import type { DetectorFactory } from "../detector-hooks.ts";
import { ToolLoops } from "../detectors.ts";

/** `tool_loop`: the same tool with the same arguments `repeats`+ times in the session. */
export const create: DetectorFactory<"tool_loop"> = (config) => {
  const loops = new ToolLoops(config);
  return { item: (i) => loops.add(i), finish: () => loops.findings() };
};
