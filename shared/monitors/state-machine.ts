/**
 * The one owner of a monitor's state (docs/monitors.md): `ok`, `warning`, `alert`, and the named
 * transitions between them. Pure: given the state, the aggregate and the definition, it names
 * the transition to take (or none). apps/processor/src/monitors/evaluate.ts applies it under the
 * monitor's row lock and writes the history / outbox row in the same transaction.
 */

export type MonitorState = "ok" | "warning" | "alert";
export type MonitorEventType = "monitor.triggered" | "monitor.resolved";

export interface MonitorThresholds {
  direction: "above" | "below";
  threshold: number;
  warningThreshold: number | null;
  /** How far back past a threshold the aggregate must come before the level is left. */
  hysteresis: number;
  minSamples: number;
}

/** Every transition, where it may start, where it ends, and the webhook event it sends. */
export const TRANSITIONS = {
  /** ok -> warning: the aggregate reached the warning threshold. */
  warn: { from: ["ok"], to: "warning", notify: "monitor.triggered" },
  /** ok -> alert: the aggregate reached the threshold. */
  alert: { from: ["ok"], to: "alert", notify: "monitor.triggered" },
  /** warning -> alert. */
  escalate: { from: ["warning"], to: "alert", notify: "monitor.triggered" },
  /** alert -> warning: back past threshold by the band, still at the warning level; no event. */
  ease: { from: ["alert"], to: "warning", notify: null },
  /** warning or alert -> ok: back past every threshold by the band. */
  resolve: { from: ["warning", "alert"], to: "ok", notify: "monitor.resolved" },
} as const satisfies Record<
  string,
  { from: readonly MonitorState[]; to: MonitorState; notify: MonitorEventType | null }
>;
export type TransitionName = keyof typeof TRANSITIONS;

/** Whether `value` is at or past `threshold` in the monitor's direction. */
const reached = (t: MonitorThresholds, value: number, threshold: number) =>
  t.direction === "above" ? value >= threshold : value <= threshold;
/** Whether `value` has come back past `threshold` by more than the band. */
const cleared = (t: MonitorThresholds, value: number, threshold: number) =>
  t.direction === "above" ? value < threshold - t.hysteresis : value > threshold + t.hysteresis;

/**
 * The transition the aggregate calls for, or null to stay. No decision below the minimum sample
 * size or without a value: the state is held, neither raised nor resolved by too little data.
 */
export function decideTransition(
  state: MonitorState,
  aggregate: { value: number | null; samples: number },
  t: MonitorThresholds,
): TransitionName | null {
  const v = aggregate.value;
  if (v === null || !Number.isFinite(v) || aggregate.samples < Math.max(1, t.minSamples)) return null;
  const warning = t.warningThreshold;
  switch (state) {
    case "ok":
      if (reached(t, v, t.threshold)) return "alert";
      return warning !== null && reached(t, v, warning) ? "warn" : null;
    case "warning":
      if (reached(t, v, t.threshold)) return "escalate";
      return cleared(t, v, warning ?? t.threshold) ? "resolve" : null;
    case "alert":
      if (!cleared(t, v, t.threshold)) return null;
      return warning !== null && !cleared(t, v, warning) ? "ease" : "resolve";
  }
}

/** A transition's end state and event, checked against where it starts (a bug, not data). */
export function applyTransition(state: MonitorState, name: TransitionName) {
  const tr = TRANSITIONS[name];
  if (!(tr.from as readonly MonitorState[]).includes(state))
    throw new Error(`monitor transition ${name} cannot start from ${state}`);
  return { to: tr.to as MonitorState, notify: tr.notify as MonitorEventType | null };
}
