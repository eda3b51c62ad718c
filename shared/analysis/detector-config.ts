/**
 * Detector thresholds: defaults here, overridable per service (`detector_settings` table, admin
 * CLI `detectors set`). Documented in docs/analysis.md. Pure: no I/O.
 */
export const DEFAULT_DETECTOR_CONFIG = {
  response_cut_off: { enabled: true },
  content_filtered: { enabled: true },
  tool_call_unanswered: { enabled: true },
  /** The same tool with the same canonical arguments `repeats`+ times in one session. */
  tool_loop: { enabled: true, repeats: 3 },
  /** OpenTelemetry severity: ERROR 17-20, FATAL 21-24. */
  error_event: { enabled: true, minSeverity: 17, criticalSeverity: 21 },
  empty_response: { enabled: true },
  /** Phrased refusals count only in replies of at most `maxChars` characters (longer ones help). */
  refusal: { enabled: true, maxChars: 600 },
  /**
   * Output-token-normalised latency (ms per output token, tokens floored at `tokenFloor`) against
   * the service's recent calls of the same model: median + `madK` x scaled MAD (at least
   * `minSpreadShare` x median), the call at least `minExcessMs` slower than the median predicts,
   * and at least `minSamples` calls in the baseline (`baselineTraces` most recent traces).
   */
  latency_outlier: {
    enabled: true,
    minSamples: 30,
    madK: 6,
    minSpreadShare: 0.1,
    minExcessMs: 2_000,
    tokenFloor: 50,
    baselineTraces: 500,
  },
  /** Prompt tokens at or above `share` of the model's context window. */
  context_window_near: { enabled: true, share: 0.9 },
  /**
   * Instructions aimed at the model inside tool results (pages, documents, e-mails); at most
   * `scanChars` characters of each result are read, and at most `maxPerSession` findings kept.
   */
  prompt_injection: { enabled: true, scanChars: 1_000_000, maxPerSession: 50 },
};
export type DetectorConfig = typeof DEFAULT_DETECTOR_CONFIG;
export type DetectorName = keyof DetectorConfig;
export const DETECTOR_NAMES = Object.keys(DEFAULT_DETECTOR_CONFIG) as DetectorName[];

/** Defaults with a service's overrides applied (unknown keys ignored: a stored override never breaks maturation). */
export function resolveDetectorConfig(overrides: unknown): DetectorConfig {
  const out = structuredClone(DEFAULT_DETECTOR_CONFIG) as Record<string, Record<string, unknown>>;
  if (overrides && typeof overrides === "object") {
    for (const [detector, values] of Object.entries(overrides as Record<string, unknown>)) {
      const target = out[detector];
      if (!target || !values || typeof values !== "object") continue;
      for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
        if (key in target && typeof value === typeof target[key]) target[key] = value;
      }
    }
  }
  return out as DetectorConfig;
}

/**
 * Parses `detector.key=value` into an override, checking the detector, the key and the value's
 * type against the defaults; throws an Error whose message names what is wrong.
 */
export function parseDetectorSetting(setting: string): {
  detector: DetectorName;
  key: string;
  value: number | boolean;
} {
  const m = /^([a-z_]+)\.([A-Za-z]+)=(.+)$/.exec(setting.trim());
  if (!m)
    throw new Error(`invalid setting "${setting}": expected detector.key=value (e.g. latency_outlier.minSamples=40)`);
  const [, detector, key, raw] = m;
  if (!(detector in DEFAULT_DETECTOR_CONFIG))
    throw new Error(`unknown detector "${detector}"; known: ${DETECTOR_NAMES.join(", ")}`);
  const defaults = DEFAULT_DETECTOR_CONFIG[detector as DetectorName] as Record<string, unknown>;
  if (!(key in defaults))
    throw new Error(`unknown key "${key}" for ${detector}; known: ${Object.keys(defaults).join(", ")}`);
  if (typeof defaults[key] === "boolean") {
    if (raw !== "true" && raw !== "false") throw new Error(`${detector}.${key} must be true or false`);
    return { detector: detector as DetectorName, key, value: raw === "true" };
  }
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${detector}.${key} must be a non-negative number`);
  return { detector: detector as DetectorName, key, value: n };
}
