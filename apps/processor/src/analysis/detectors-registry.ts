import { type DetectorConfig, type DetectorName, DETECTOR_NAMES } from "@cellar/shared/analysis/detector-config";
import type { ModelCall } from "./calls.ts";
import type { Detector, DetectorFactory } from "./detector-hooks.ts";
import { DETECTOR_FACTORIES } from "./detectors-index.ts";
import type { Finding, LatencyNorms } from "./detectors.ts";

export type { Detector, DetectorContext, DetectorFactory, SessionFacts } from "./detector-hooks.ts";

/**
 * The wiring, derived from the one list of detectors (DETECTORS in
 * shared/analysis/detector-config.ts): each declared name `foo_bar` is implemented by
 * `./detectors/foo-bar.ts`, which exports `create` (a DetectorFactory), imported statically by
 * ./detectors-index.ts (so the processor bundles into one file). Adding a detector is its
 * declaration in that list, its file here, its line in the index, its test and its docs row:
 * TypeScript refuses a declared detector the index lacks, and test/detector-registry.test.ts
 * checks that the index imports exactly the files of ./detectors/ and that no file there is
 * undeclared.
 */
export const detectorFile = (name: string) => `${name.replaceAll("_", "-")}.ts`;

export const REGISTRY: { [N in DetectorName]: DetectorFactory<N> } = DETECTOR_FACTORIES;

/** The enabled detectors of a service's config, in declaration order. */
export function createDetectors(config: DetectorConfig): Detector[] {
  return DETECTOR_NAMES.filter((name) => config[name].enabled).map((name) =>
    (REGISTRY[name] as DetectorFactory<DetectorName>)(config[name]),
  );
}

/** The per-call findings of one call (unit tests and the stop-reason table read this). */
export function callFindings(c: ModelCall, config: DetectorConfig, latencyNorms?: LatencyNorms): Finding[] {
  return createDetectors(config).flatMap((d) => {
    const f = d.call ? d.call(c, { latencyNorms }) : null;
    return f ? [f] : [];
  });
}
