import type { DetectorFactory } from "../detector-hooks.ts";
import { UnansweredCalls } from "../detectors.ts";

/** `tool_call_unanswered`: tool calls seen as items, judged at the session's end. */
export const create: DetectorFactory<"tool_call_unanswered"> = () => {
  const calls = new UnansweredCalls();
  return { item: (i) => calls.add(i), finish: (s) => calls.findings(s.answered, s.impliedAnswered) };
};
