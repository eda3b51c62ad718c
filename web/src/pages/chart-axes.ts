/**
 * The overview charts' y axes (issue 37): a rate is bounded to 0-100% (all-zero rates drew
 * 0.0% / 5000.0% / 10000.0%), counts get integer ticks only (a 4-5 range read "4, 5, 5"), and
 * the axis is as wide as its longest label (a fixed 72 px clipped "10000.0%" at the left edge).
 * Pure functions: uPlot calls them, test/dashboard-display.test.ts checks them.
 */
export type AxisKind = "count" | "rate" | "usd";

/** Tick steps uPlot may choose from: integers for counts, round shares for rates. */
const COUNT_STEPS = [1, 2, 5].flatMap((m) => Array.from({ length: 10 }, (_, e) => m * 10 ** e)).sort((a, b) => a - b);
const RATE_STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5];

export function axisSteps(kind: AxisKind): number[] | undefined {
  if (kind === "count") return COUNT_STEPS;
  if (kind === "rate") return RATE_STEPS;
  return undefined; // uPlot's own decimal steps
}

/** The y range from 0: rates up to their highest value rounded up (5% at least, 100% at most). */
export function axisRange(kind: AxisKind, dataMax: number | null): [number, number] {
  const max = dataMax !== null && Number.isFinite(dataMax) ? Math.max(0, dataMax) : 0;
  if (kind === "rate") {
    if (max <= 0) return [0, 0.05];
    const step = RATE_STEPS.find((s) => max * 1.05 <= s * 5) ?? 0.2;
    return [0, Math.min(1, Math.ceil((max * 1.05) / step) * step)];
  }
  if (kind === "count") return [0, Math.max(1, Math.ceil(max * 1.1))];
  return [0, max > 0 ? max * 1.1 : 0.01];
}

/** Labels for the ticks uPlot chose: a rate with as many decimals as its step needs. */
export function axisLabels(kind: AxisKind, ticks: number[], format: (v: number) => string): string[] {
  if (kind === "rate") {
    const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
    const decimals = step >= 0.01 - 1e-12 ? 0 : 1;
    return ticks.map((t) => `${(t * 100).toFixed(decimals)}%`);
  }
  if (kind === "count") return ticks.map((t) => (Number.isInteger(t) ? format(t) : ""));
  return ticks.map(format);
}

/** Axis width in CSS pixels for these labels (12 px digits are at most ~7.2 px wide), plus tick and gap. */
export function axisWidth(labels: string[]): number {
  const longest = labels.reduce((n, l) => Math.max(n, l.length), 0);
  return Math.max(40, Math.ceil(longest * 7.5) + 24);
}
