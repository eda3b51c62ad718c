import type { DetectorName } from "@cellar/shared/analysis/detector-config";
import type { DetectorFactory } from "./detector-hooks.ts";
import { create as responseCutOff } from "./detectors/response-cut-off.ts";
import { create as contentFiltered } from "./detectors/content-filtered.ts";
import { create as toolCallUnanswered } from "./detectors/tool-call-unanswered.ts";
import { create as toolLoop } from "./detectors/tool-loop.ts";
import { create as errorEvent } from "./detectors/error-event.ts";
import { create as emptyResponse } from "./detectors/empty-response.ts";
import { create as refusal } from "./detectors/refusal.ts";
import { create as latencyOutlier } from "./detectors/latency-outlier.ts";
import { create as contextWindowNear } from "./detectors/context-window-near.ts";
import { create as unpricedModel } from "./detectors/unpriced-model.ts";
import { create as promptInjection } from "./detectors/prompt-injection.ts";

/**
 * Each declared detector's factory, imported statically from its file `./detectors/<name>.ts`
 * (DETECTORS's order). A static list, not an import computed at run time, so the processor can be
 * bundled into one file (its start-up, docs/operations.md). Hand-kept beside the declarations:
 * TypeScript (`satisfies`) refuses a declared detector missing here, a name not declared, or a
 * factory of another detector's type; test/detector-registry.test.ts checks that it imports
 * exactly the files of ./detectors/, one per declared detector.
 */
export const DETECTOR_FACTORIES = {
  response_cut_off: responseCutOff,
  content_filtered: contentFiltered,
  tool_call_unanswered: toolCallUnanswered,
  tool_loop: toolLoop,
  error_event: errorEvent,
  empty_response: emptyResponse,
  refusal: refusal,
  latency_outlier: latencyOutlier,
  context_window_near: contextWindowNear,
  unpriced_model: unpricedModel,
  prompt_injection: promptInjection,
} satisfies { [N in DetectorName]: DetectorFactory<N> };
