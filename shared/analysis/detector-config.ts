/**
 * The detectors, declared once: name, severity, what makes two findings "the same problem" (the
 * fingerprint key), the rule in a line, and the thresholds with their defaults (overridable per
 * service: `detector_settings`, admin CLI `detectors set`). Everything else is derived from this
 * list: the defaults below, the admin CLI's checks, the processor's wiring
 * (apps/processor/src/analysis/detectors-registry.ts must implement every name), the corpus score
 * (test/corpus/replay.ts scores every name) and the docs (docs/analysis.md's tables are checked
 * against it by test/detector-registry.test.ts). Pure: no I/O.
 */
export interface DetectorDeclaration {
  severity: string;
  /** What the fingerprint is keyed on. */
  key: string;
  /** The rule in a line (the docs table row; the details in docs/analysis.md). */
  rule: string;
  /** Thresholds and their defaults; `enabled` first. */
  defaults: { enabled: boolean } & Record<string, number | boolean>;
}

export const DETECTORS = {
  response_cut_off: {
    severity: "medium",
    key: "model",
    rule: 'a response\'s stop reason is of class `length` (`length`, `max_tokens`, `MAX_TOKENS`, `model_length`, ...; see "Stop reasons")',
    defaults: { enabled: true },
  },
  content_filtered: {
    severity: "high",
    key: "model",
    rule: "its stop reason is of class `content_filter` (`content_filter`, `SAFETY`, `guardrail_intervened`, `content-filter`, ...)",
    defaults: { enabled: true },
  },
  tool_call_unanswered: {
    severity: "medium",
    key: "tool name",
    rule: "a tool call (with an id) whose `tool` result never appears in the session; calls of the 1st response of a 2-response trace count as answered",
    defaults: { enabled: true },
  },
  /** The same tool with the same canonical arguments `repeats`+ times in one session. */
  tool_loop: {
    severity: "medium",
    key: "tool name",
    rule: "the same tool with the same canonical arguments (JSON re-serialized with sorted keys) called >= `repeats` (3) times in the session; one finding per tool + arguments",
    defaults: { enabled: true, repeats: 3 },
  },
  /** OpenTelemetry severity: ERROR 17-20, FATAL 21-24. */
  error_event: {
    severity: "high / critical",
    key: "event name",
    rule: "an event with `severity_number` >= `minSeverity` (17, ERROR); >= `criticalSeverity` (21, FATAL) = critical",
    defaults: { enabled: true, minSeverity: 17, criticalSeverity: 21 },
  },
  empty_response: {
    severity: "medium",
    key: "model",
    rule: "a response with no text, no tool calls, no refusal, no non-text content parts (and not cut off, filtered or refused)",
    defaults: { enabled: true },
  },
  /** Phrased refusals count only in replies of at most `maxChars` characters (longer ones help). */
  refusal: {
    severity: "low",
    key: "model",
    rule: 'see "Refusals"',
    defaults: { enabled: true, maxChars: 600 },
  },
  /**
   * Output-token-normalised latency (ms per output token, tokens floored at `tokenFloor`) against
   * the service's recent calls of the same model: median + `madK` x scaled MAD (at least
   * `minSpreadShare` x median), the call at least `minExcessMs` slower than the median predicts,
   * and at least `minSamples` calls in the baseline (`baselineTraces` most recent traces).
   */
  latency_outlier: {
    severity: "medium",
    key: "model",
    rule: 'see "Latency outliers"',
    defaults: {
      enabled: true,
      minSamples: 30,
      madK: 6,
      minSpreadShare: 0.1,
      minExcessMs: 2_000,
      tokenFloor: 50,
      baselineTraces: 500,
    },
  },
  /** Prompt tokens at or above `share` of the model's context window. */
  context_window_near: {
    severity: "medium",
    key: "model",
    rule: "prompt tokens >= `share` (0.9) of the model's context window (price table); unknown models never fire",
    defaults: { enabled: true, share: 0.9 },
  },
  /**
   * A call the price book cannot price (cost null: an unknown model, a service tier or token kind
   * without a price); the book's reason in the evidence. One finding per model per session, keyed
   * on the model, so a service's issue opens the first time it calls the model.
   */
  unpriced_model: {
    severity: "low",
    key: "model",
    rule: "a call whose cost is null (unknown model, unpriced service tier or token kind); names the model and the price book's reason; once per model per session",
    defaults: { enabled: true },
  },
  /**
   * Instructions aimed at the model inside tool results and tool events (pages, documents,
   * e-mails); at most `scanChars` characters of each are read, and at most `maxPerSession`
   * findings kept.
   */
  prompt_injection: {
    severity: "high / critical",
    key: "tool name + rule",
    rule: 'see "Prompt injections"',
    defaults: { enabled: true, scanChars: 1_000_000, maxPerSession: 50 },
  },
} satisfies Record<string, DetectorDeclaration>;

export type DetectorName = keyof typeof DETECTORS;
export type DetectorConfig = { [N in DetectorName]: (typeof DETECTORS)[N]["defaults"] };
export const DETECTOR_NAMES = Object.keys(DETECTORS) as DetectorName[];
/** Every detector's defaults (derived from DETECTORS). */
export const DEFAULT_DETECTOR_CONFIG = Object.fromEntries(
  DETECTOR_NAMES.map((name) => [name, DETECTORS[name].defaults]),
) as DetectorConfig;

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
