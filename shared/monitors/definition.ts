import { Type, type Static } from "@sinclair/typebox";

/**
 * What a monitor watches (docs/monitors.md). Per matured session (or trace) one sample; the
 * aggregate over the window's samples is the mean, or a percentile for the latency metrics.
 */
export const MONITOR_METRICS = {
  cost: { aggregate: "mean", arg: false, describe: "mean cost (USD) per entity" },
  tokens: { aggregate: "mean", arg: false, describe: "mean total tokens per entity" },
  latency_p50: { aggregate: "p50", arg: false, describe: "median latency (ms)" },
  latency_p95: { aggregate: "p95", arg: false, describe: "95th percentile latency (ms)" },
  latency_p99: { aggregate: "p99", arg: false, describe: "99th percentile latency (ms)" },
  error_rate: { aggregate: "mean", arg: false, describe: "share of entities with an error (0-1)" },
  problem_rate: { aggregate: "mean", arg: false, describe: "share of sessions with a detected problem (0-1)" },
  finding_rate: { aggregate: "mean", arg: true, describe: "share of sessions with a finding of detector <arg> (0-1)" },
  score_mean: { aggregate: "mean", arg: true, describe: "mean of score <arg> (sessions with it)" },
  category_share: {
    aggregate: "mean",
    arg: true,
    describe: "share of score <name> labelled <label>; arg is name:label (sessions with it)",
  },
  // The ledger's (docs/ledger.md): evaluated every 10 s from its counts, not per maturation.
  loss: {
    aggregate: "sum",
    arg: false,
    describe: "items lost in the window: dropped by the SDKs, refused by ingest, dead-lettered (less replayed)",
  },
} as const;
export type MonitorMetric = keyof typeof MONITOR_METRICS;
export type Aggregate = (typeof MONITOR_METRICS)[MonitorMetric]["aggregate"];

/** Largest window: a day keeps a monitor's sample set bounded by a day of its service's traffic. */
export const MAX_WINDOW_SECONDS = 86_400;

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: "^[^\\u0000-\\u001f\\u007f]*$" });

/** The body of POST /monitors (and PUT, every field then optional). */
export const MonitorDefinition = Type.Object(
  {
    service_name: Text(200),
    name: Text(200),
    entity: Type.Optional(Type.Union([Type.Literal("session"), Type.Literal("trace")])),
    metric: Type.Union(Object.keys(MONITOR_METRICS).map((m) => Type.Literal(m))),
    metric_arg: Type.Optional(Text(300)),
    filters: Type.Optional(
      Type.Object(
        { environment: Type.Optional(Text(128)), model: Type.Optional(Text(256)), label: Type.Optional(Text(256)) },
        { additionalProperties: false },
      ),
    ),
    window_seconds: Type.Integer({ minimum: 60, maximum: MAX_WINDOW_SECONDS }),
    direction: Type.Optional(Type.Union([Type.Literal("above"), Type.Literal("below")])),
    threshold: Type.Number({ minimum: -1e15, maximum: 1e15 }),
    warning_threshold: Type.Optional(Type.Union([Type.Number({ minimum: -1e15, maximum: 1e15 }), Type.Null()])),
    hysteresis: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
    min_samples: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type MonitorDefinition = Static<typeof MonitorDefinition>;

/** Rules the schema cannot say; "invalid <field>: ..." or null. */
export function definitionProblem(d: MonitorDefinition): string | null {
  const spec = MONITOR_METRICS[d.metric as MonitorMetric];
  if (spec.arg && !d.metric_arg) return `invalid metric_arg: required for ${d.metric} (${spec.describe})`;
  if (!spec.arg && d.metric_arg !== undefined) return `invalid metric_arg: ${d.metric} takes none`;
  if (d.metric === "category_share" && !/^[^:]+:.+$/.test(d.metric_arg!))
    return "invalid metric_arg: category_share takes name:label";
  if (
    (d.entity ?? "session") === "trace" &&
    ["problem_rate", "finding_rate", "score_mean", "category_share"].includes(d.metric)
  )
    return `invalid metric: ${d.metric} is measured on sessions (entity session)`;
  const w = d.warning_threshold;
  if (w !== undefined && w !== null) {
    const above = (d.direction ?? "above") === "above";
    if (above ? w >= d.threshold : w <= d.threshold)
      return `invalid warning_threshold: must be ${above ? "below" : "above"} threshold for direction ${above ? "above" : "below"}`;
  }
  return null;
}
