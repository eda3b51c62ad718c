import type { DetectorFactory } from "../detector-hooks.ts";
import { InjectionDetector } from "../injection-detector.ts";

/** `prompt_injection`: tool results and tool events scanned as seen, judged against the next turn. */
export const create: DetectorFactory<"prompt_injection"> = (config) => {
  const injections = new InjectionDetector(config);
  return {
    item: (i) => injections.add(i),
    event: (e) => {
      injections.addEvent(e);
      return [];
    },
    trace: (calls) => injections.nextTurn(calls),
    finish: () => injections.judge([]),
  };
};
