import { type DetectorConfig, type DetectorName, DETECTOR_NAMES } from "@cellar/shared/analysis/detector-config";
import type { ModelCall } from "./calls.ts";
import {
  contentFiltered,
  contextWindowNear,
  cutOff,
  emptyResponse,
  errorEvent,
  type Finding,
  latencyFinding,
  type LatencyNorms,
  refusalFinding,
  ToolLoops,
  UnansweredCalls,
} from "./detectors.ts";
import { InjectionDetector } from "./injection-detector.ts";
import type { EventInput, TranscriptItem } from "./transcript.ts";
import { UnpricedModels } from "./unpriced.ts";

/**
 * One interface for every detector, whatever it looks at: a model call, an event, the transcript
 * items as they are discovered, the calls of each trace, or the whole session at its end. A
 * detector implements the hooks it needs; the session analysis (session.ts) calls every hook of
 * every enabled detector, so wiring a new detector is one entry in REGISTRY below (the compiler
 * requires one per name declared in shared/analysis/detector-config.ts, and the declarations
 * drive the config, the admin CLI, the corpus score and the docs check).
 */
export interface Detector {
  /** One model call (per-call rules). */
  call?(c: ModelCall, ctx: DetectorContext): Finding | null;
  /** One event, in history order. */
  event?(e: EventInput): Finding[];
  /** Every transcript item, in discovery order. */
  item?(i: TranscriptItem): void;
  /** The model calls of a trace, after its items were seen (the turn that read them). */
  trace?(calls: ModelCall[]): Finding[];
  /** The end of the session. */
  finish?(s: SessionFacts): Finding[];
}
export interface DetectorContext {
  latencyNorms?: LatencyNorms;
}
export interface SessionFacts {
  /** Tool call ids whose result the transcript saw, and those implied answered (transcript.ts). */
  answered: ReadonlySet<string>;
  impliedAnswered: ReadonlySet<string>;
}

type Factory<N extends DetectorName> = (config: DetectorConfig[N]) => Detector;
const one = (f: Finding | null): Finding[] => (f ? [f] : []);

export const REGISTRY: { [N in DetectorName]: Factory<N> } = {
  response_cut_off: () => ({ call: (c) => cutOff(c) }),
  content_filtered: () => ({ call: (c) => contentFiltered(c) }),
  tool_call_unanswered: () => {
    const calls = new UnansweredCalls();
    return { item: (i) => calls.add(i), finish: (s) => calls.findings(s.answered, s.impliedAnswered) };
  },
  tool_loop: (config) => {
    const loops = new ToolLoops(config);
    return { item: (i) => loops.add(i), finish: () => loops.findings() };
  },
  error_event: (config) => ({ event: (e) => one(errorEvent(e, config)) }),
  empty_response: () => ({ call: (c) => emptyResponse(c) }),
  refusal: (config) => ({ call: (c) => refusalFinding(c, config) }),
  latency_outlier: (config) => ({ call: (c, ctx) => latencyFinding(c, config, ctx.latencyNorms) }),
  context_window_near: (config) => ({ call: (c) => contextWindowNear(c, config) }),
  unpriced_model: () => {
    const unpriced = new UnpricedModels();
    return { call: (c) => unpriced.call(c) };
  },
  prompt_injection: (config) => {
    const injections = new InjectionDetector(config);
    return {
      item: (i) => injections.add(i),
      event: (e) => {
        injections.addEvent(e);
        return [];
      },
      trace: (calls) => injections.nextTurn(calls),
      finish: () => injections.nextTurn([]),
    };
  },
};

/** The enabled detectors of a service's config, in declaration order. */
export function createDetectors(config: DetectorConfig): Detector[] {
  return DETECTOR_NAMES.filter((name) => config[name].enabled).map((name) =>
    (REGISTRY[name] as Factory<DetectorName>)(config[name]),
  );
}

/** The per-call findings of one call (unit tests and the stop-reason table read this). */
export function callFindings(c: ModelCall, config: DetectorConfig, latencyNorms?: LatencyNorms): Finding[] {
  return createDetectors(config).flatMap((d) => (d.call ? one(d.call(c, { latencyNorms })) : []));
}
