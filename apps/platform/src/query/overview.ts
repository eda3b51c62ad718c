import type postgres from "postgres";
import { percentileOf } from "@cellar/shared/rollups/histogram";
import { inSnapshot } from "./snapshot.ts";
import type { Static } from "elysia";
import { type Overview, type OverviewWindow, WINDOWS } from "../overview/model.ts";

/** A latency percentile of the rollups' histogram in whole ms (the sub-millisecond bucket reads 0.5). */
function latencyMs(hist: readonly number[], p: number): number | null {
  const ms = percentileOf(hist, p);
  return ms === null || ms < 1 ? ms : Math.round(ms);
}

/**
 * The overview of one service over a window, from the rollups only (overview_rollups, kept as
 * sessions mature), never from raw rows: every window reads one row per point (12 to 30) per
 * environment and model. Session numbers count at the session's first activity.
 */
export async function readOverview(
  sql: postgres.Sql,
  input: { serviceId: string; window: OverviewWindow; environment?: string; now: Date },
): Promise<Static<typeof Overview>> {
  const w = WINDOWS[input.window];
  const to = input.now;
  // Whole buckets: the window starts at the bucket boundary at or before now - window.
  const fromMs = to.getTime() - w.seconds * 1000;
  const from = new Date(fromMs - (fromMs % (w.rows * 1000)));
  const env = input.environment;
  // One snapshot for the five reads: run apart (one connection each), a rollup committed between
  // them gave a model's traces from after it and its latency histogram from before (p50 null).
  const [series, models, hist, environments, issues] = await inSnapshot(sql, (tx) =>
    overviewReads(tx, input, w.rows, from, to),
  );
  const hists = new Map<string, number[]>();
  for (const h of hist) {
    if (!hists.has(h.model)) hists.set(h.model, []);
    hists.get(h.model)![h.i - 1] = Number(h.n);
  }
  const dense = (model: string) => Array.from(hists.get(model) ?? [], (n) => n ?? 0);
  const all = models.find((m) => m.model === "");
  const totalHist = dense("");
  const sum = (f: (s: (typeof series)[number]) => number) => series.reduce((a, s) => a + f(s), 0);
  return {
    window: input.window,
    from: from.toISOString(),
    to: to.toISOString(),
    step: w.step,
    environment: env ?? null,
    environments: environments.map((e) => e.environment),
    totals: {
      sessions: sum((s) => Number(s.sessions)),
      traces: Number(all?.traces ?? 0),
      errorSessions: sum((s) => Number(s.errors)),
      problemSessions: sum((s) => Number(s.problems)),
      costUsd: all?.cost ?? 0,
      promptTokens: Number(all?.prompt ?? 0),
      completionTokens: Number(all?.completion ?? 0),
      unpricedCalls: Number(all?.unpriced ?? 0),
      latencyP50Ms: latencyMs(totalHist, 50),
      latencyP95Ms: latencyMs(totalHist, 95),
    },
    series: series.map((s) => ({
      t: s.t.toISOString(),
      sessions: Number(s.sessions),
      traces: Number(s.traces),
      errorSessions: Number(s.errors),
      problemSessions: Number(s.problems),
      costUsd: s.cost,
      tokens: Number(s.tokens),
    })),
    byModel: models
      .filter((m) => m.model !== "")
      .map((m) => ({
        model: m.model,
        traces: Number(m.traces),
        costUsd: m.cost,
        promptTokens: Number(m.prompt),
        completionTokens: Number(m.completion),
        unpricedCalls: Number(m.unpriced),
        latencyP50Ms: latencyMs(dense(m.model), 50),
        latencyP95Ms: latencyMs(dense(m.model), 95),
      }))
      .sort((a, b) => b.costUsd - a.costUsd || b.traces - a.traces),
    topIssues: issues.map((i) => ({
      id: i.id,
      title: i.title,
      severity: i.severity,
      occurrences: i.occurrences,
      affectedSessions: i.affected_sessions,
      lastSeenAt: i.last_seen_at.toISOString(),
    })),
  };
}

/** The overview's five reads, on one transaction (`tx`) so they see one snapshot. */
function overviewReads(
  sql: postgres.TransactionSql,
  input: { serviceId: string; environment?: string },
  rows: number,
  from: Date,
  to: Date,
) {
  const env = input.environment;
  const where = sql`trace_service_id = ${input.serviceId} and bucket_seconds = ${rows}
    and bucket_start >= ${from} and bucket_start <= ${to} ${env === undefined ? sql`` : sql`and environment = ${env}`}`;
  return Promise.all([
    sql<
      { t: Date; sessions: string; traces: string; errors: string; problems: string; cost: number; tokens: string }[]
    >`
      select bucket_start as t, sum(sessions) as sessions, sum(traces) as traces, sum(error_sessions) as errors,
        sum(problem_sessions) as problems, sum(cost_usd) as cost, sum(prompt_tokens + completion_tokens) as tokens
      from overview_rollups where ${where} and model = '' group by 1 order by 1`,
    sql<{ model: string; traces: string; cost: number; prompt: string; completion: string; unpriced: string }[]>`
      select model, sum(traces) as traces, sum(cost_usd) as cost, sum(prompt_tokens) as prompt,
        sum(completion_tokens) as completion, sum(unpriced_calls) as unpriced
      from overview_rollups where ${where} group by model`,
    sql<{ model: string; i: number; n: string }[]>`
      select model, u.i::int as i, sum(u.n) as n
      from overview_rollups, unnest(latency_hist) with ordinality as u(n, i)
      where ${where} group by model, u.i`,
    sql<{ environment: string }[]>`
      select distinct environment from overview_rollups
      where trace_service_id = ${input.serviceId} and bucket_seconds = 86400 and model = ''
        and bucket_start >= ${new Date(to.getTime() - 31 * 86_400_000)} order by 1 limit 100`,
    sql<
      {
        id: string;
        title: string;
        severity: string;
        occurrences: number;
        affected_sessions: number;
        last_seen_at: Date;
      }[]
    >`
      select id, title, severity, occurrences, affected_sessions, last_seen_at from issues
      where trace_service_id = ${input.serviceId} and last_seen_at >= ${from}
      order by occurrences desc, last_seen_at desc limit 5`,
  ]);
}
