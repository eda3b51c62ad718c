import { t } from "elysia";
import { Iso, Nullable } from "../http/schemas.ts";

/** The overview's windows, its query and its answer. */

/** The windows the overview offers: its length, the rollup rows it reads, and its chart step. */
/** `rows`: the rollup granularity read, one row per chart point (apps/processor/src/rollups). */
export const WINDOWS = {
  "1h": { seconds: 3600, rows: 300, step: "5 minutes" },
  "24h": { seconds: 86_400, rows: 3600, step: "1 hour" },
  "7d": { seconds: 7 * 86_400, rows: 21_600, step: "6 hours" },
  "30d": { seconds: 30 * 86_400, rows: 86_400, step: "1 day" },
} as const;
export type OverviewWindow = keyof typeof WINDOWS;

export const Overview = t.Object({
  window: t.String(),
  from: Iso,
  to: Iso,
  step: t.String({ description: "Width of one point of `series`" }),
  environment: Nullable(t.String()),
  environments: t.Array(t.String(), { description: "Environments seen in the last 30 days" }),
  totals: t.Object({
    sessions: t.Integer(),
    traces: t.Integer(),
    errorSessions: t.Integer(),
    problemSessions: t.Integer(),
    costUsd: t.Number(),
    promptTokens: t.Integer(),
    completionTokens: t.Integer(),
    unpricedCalls: t.Integer({
      description: "Model calls the price book could not price (their cost is not in costUsd)",
    }),
    latencyP50Ms: Nullable(t.Number()),
    latencyP95Ms: Nullable(t.Number()),
  }),
  series: t.Array(
    t.Object({
      t: Iso,
      sessions: t.Integer(),
      traces: t.Integer(),
      errorSessions: t.Integer(),
      problemSessions: t.Integer(),
      costUsd: t.Number(),
      tokens: t.Integer(),
    }),
  ),
  byModel: t.Array(
    t.Object({
      model: t.String(),
      traces: t.Integer(),
      costUsd: t.Number(),
      promptTokens: t.Integer(),
      completionTokens: t.Integer(),
      unpricedCalls: t.Integer({ description: "This model's calls the price book could not price" }),
      latencyP50Ms: Nullable(t.Number()),
      latencyP95Ms: Nullable(t.Number()),
    }),
  ),
  topIssues: t.Array(
    t.Object({
      id: t.String(),
      title: t.String(),
      severity: t.String(),
      occurrences: t.Integer(),
      affectedSessions: t.Integer(),
      lastSeenAt: Iso,
    }),
  ),
});

const WINDOW_NAMES = Object.keys(WINDOWS) as OverviewWindow[];
export const OverviewQuery = t.Object({
  window: t.Optional(
    t.Union(
      WINDOW_NAMES.map((w) => t.Literal(w)),
      { default: "24h", error: `invalid window: must be one of ${WINDOW_NAMES.join(", ")}` },
    ),
  ),
  environment: t.Optional(
    t.String({ maxLength: 128, error: "invalid environment: must be a string of at most 128 characters" }),
  ),
});
