import { MONITOR_METRICS, type Aggregate, type MonitorMetric } from "./definition.ts";

/** What a monitor can read of one matured session or trace (facts.ts loads it). */
export interface EntityFacts {
  entityPk: string;
  environment: string | null;
  labels: string[];
  models: string[];
  costUsd: number | null;
  totalTokens: number | null;
  /** A session: its own p95 model-call latency; a trace: its duration. */
  latencyMs: number | null;
  errors: number;
  problems: number;
  detectors: string[];
  scores: Array<{ name: string; value: number | null; label: string | null }>;
}

export interface SampledMonitor {
  metric: string;
  metricArg: string | null;
  filters: { environment?: string; model?: string; label?: string };
}

/** Whether the entity is in the monitor's population (every given filter must hold). */
export function matchesFilters(filters: SampledMonitor["filters"], f: EntityFacts): boolean {
  if (filters.environment !== undefined && f.environment !== filters.environment) return false;
  if (filters.model !== undefined && !f.models.includes(filters.model)) return false;
  if (filters.label !== undefined && !f.labels.includes(filters.label)) return false;
  return true;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/**
 * The entity's one sample for the monitor, or null when it has none (no cost computed, no score
 * of that name): such an entity is not counted. Rates sample 1 or 0 so the window's mean is a share.
 */
export function sampleOf(m: SampledMonitor, f: EntityFacts): number | null {
  switch (m.metric as MonitorMetric) {
    case "cost":
      return f.costUsd;
    case "tokens":
      return f.totalTokens;
    case "latency_p50":
    case "latency_p95":
    case "latency_p99":
      return f.latencyMs;
    case "error_rate":
      return f.errors > 0 ? 1 : 0;
    case "problem_rate":
      return f.problems > 0 ? 1 : 0;
    case "finding_rate":
      return f.detectors.includes(m.metricArg ?? "") ? 1 : 0;
    case "score_mean":
      return mean(f.scores.filter((s) => s.name === m.metricArg && s.value !== null).map((s) => s.value!));
    case "category_share": {
      const at = (m.metricArg ?? "").indexOf(":");
      const [name, label] = [m.metricArg!.slice(0, at), m.metricArg!.slice(at + 1)];
      const labelled = f.scores.filter((s) => s.name === name && s.label !== null);
      return labelled.length ? labelled.filter((s) => s.label === label).length / labelled.length : null;
    }
    default:
      return null;
  }
}

export const aggregateOf = (metric: string): Aggregate => MONITOR_METRICS[metric as MonitorMetric].aggregate;

/**
 * The window's aggregate, as Postgres computes it in the processor (avg, percentile_cont: linear
 * interpolation between the two nearest ranks), for the dashboard's preview.
 */
export function aggregateValues(aggregate: Aggregate, values: number[]): number | null {
  if (values.length === 0) return null;
  if (aggregate === "mean") return mean(values);
  if (aggregate === "sum") return values.reduce((a, b) => a + b, 0);
  const p = { p50: 0.5, p95: 0.95, p99: 0.99 }[aggregate];
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

/** The same aggregate in SQL over `monitor_samples.value`. */
export const AGGREGATE_SQL: Record<Aggregate, string> = {
  mean: "avg(value)",
  sum: "sum(value)",
  p50: "percentile_cont(0.5) within group (order by value)",
  p95: "percentile_cont(0.95) within group (order by value)",
  p99: "percentile_cont(0.99) within group (order by value)",
};
