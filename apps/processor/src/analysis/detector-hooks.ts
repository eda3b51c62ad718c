import type { DetectorConfig, DetectorName } from "@cellar/shared/analysis/detector-config";
import type { ModelCall } from "./calls.ts";
import type { Finding, LatencyNorms } from "./detectors.ts";
import type { EventInput, TranscriptItem } from "./transcript.ts";

/**
 * One interface for every detector, whatever it looks at: a model call, an event, the transcript
 * items as they are discovered, the calls of each trace, or the whole session at its end. A
 * detector implements the hooks it needs; the session analysis (session.ts) calls every hook of
 * every enabled detector.
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

/**
 * What a detector's file exports as `create` (detectors/<name>.ts): a fresh detector for one
 * session, from the service's thresholds of that detector.
 */
export type DetectorFactory<N extends DetectorName> = (config: DetectorConfig[N]) => Detector;
