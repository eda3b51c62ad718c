import { type DetectorConfig, type DetectorName, DETECTOR_NAMES } from "@cellar/shared/analysis/detector-config";
import type { ModelCall } from "./calls.ts";
import type { Detector, DetectorFactory } from "./detector-hooks.ts";
import type { Finding, LatencyNorms } from "./detectors.ts";

export type { Detector, DetectorContext, DetectorFactory, SessionFacts } from "./detector-hooks.ts";

/**
 * The wiring, derived from the one list of detectors (DETECTORS in
 * shared/analysis/detector-config.ts): each declared name `foo_bar` is implemented by
 * `./detectors/foo-bar.ts`, which exports `create` (a DetectorFactory). Adding a detector is its
 * declaration in that list, its file here, its test and its docs row: nothing to wire by hand.
 * Loaded once when the processor starts; a declared name without its file, or a file without
 * `create`, stops the start with a message naming both (test/detector-registry.test.ts checks the
 * same, and that no file here is undeclared).
 */
export const detectorFile = (name: string) => `${name.replaceAll("_", "-")}.ts`;

async function load<N extends DetectorName>(name: N): Promise<[N, DetectorFactory<N>]> {
  let mod: { create?: unknown };
  try {
    mod = await import(`./detectors/${detectorFile(name)}`);
  } catch (err) {
    throw new Error(
      `detector ${name} is declared but apps/processor/src/analysis/detectors/${detectorFile(name)} cannot be loaded`,
      {
        cause: err,
      },
    );
  }
  if (typeof mod.create !== "function")
    throw new Error(`detector ${name}: detectors/${detectorFile(name)} must export create(config)`);
  return [name, mod.create as DetectorFactory<N>];
}

export const REGISTRY = Object.fromEntries(await Promise.all(DETECTOR_NAMES.map(load))) as {
  [N in DetectorName]: DetectorFactory<N>;
};

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
