import { prunePendingTraces, sweepCandidates, traceSweepCandidates } from "@cellar/shared/maturation/state";
import { matureIsolated } from "./isolate.ts";
import { publishAll, sessionMessage, traceMessage, type MaturationDeps } from "./mature.ts";
import { selectMaturing } from "./store.ts";

export interface SweepResult {
  sessions: number;
  traces: number;
  /** MATURED messages that were owed (committed, never recorded as published) and are now sent. */
  republished: number;
  /** Sessions whose maturation failed in this sweep (retried later with backoff, or parked). */
  failed: number;
}

/**
 * The safety net: matures sessions and traces idle far past the window whose marker never came
 * (a processor down longer than the marker TTL, a lost refresh), and publishes MATURED messages
 * still owed after a crash whose marker was already gone. Markers are the mechanism. A chunk
 * that fails is retried one entity at a time (matureIsolated): a failing session is recorded
 * and skipped until its retry time, and never stops the sweep.
 */
export async function sweepIdle(deps: MaturationDeps, graceSeconds: number, limit = 500): Promise<SweepResult> {
  const idleFor = deps.windowSeconds + graceSeconds;
  const sessions = await sweepCandidates(deps.sql, idleFor, limit);
  const traces = await traceSweepCandidates(deps.sql, idleFor, limit);
  const count = (outcomes: Map<string, string>, what: string[]) =>
    [...outcomes.values()].filter((o) => what.includes(o)).length;
  let s = 0,
    t = 0,
    failed = 0;
  for (let i = 0; i < sessions.length; i += 50) {
    const outcomes = await matureIsolated(
      deps,
      "session",
      sessions.slice(i, i + 50).map((r) => r.id),
    );
    s += count(outcomes, ["matured"]);
    failed += count(outcomes, ["backing-off", "parked"]);
  }
  for (let i = 0; i < traces.length; i += 50)
    t += count(
      await matureIsolated(
        deps,
        "trace",
        traces.slice(i, i + 50).map((r) => r.id),
      ),
      ["matured"],
    );

  const owedSessions = await selectMaturing(deps.sql, "session", { owedOlderThanSeconds: graceSeconds, limit });
  await publishAll(deps, owedSessions.map(sessionMessage));
  const owedTraces = await selectMaturing(deps.sql, "trace", { owedOlderThanSeconds: graceSeconds, limit });
  await publishAll(
    deps,
    owedTraces.map(traceMessage),
    new Map(owedTraces.flatMap((r) => (r.ingested_key ? [[r.id, r.ingested_key] as [string, string]] : []))),
  );
  const r = owedSessions.length + owedTraces.length;
  // Pending rows of traces deleted while pending (no foreign key removes them).
  await prunePendingTraces(deps.sql, idleFor, limit);
  if (s || t || r)
    deps.logger.warn("sweep matured or published what its marker missed", { sessions: s, traces: t, republished: r });
  return { sessions: s, traces: t, republished: r, failed };
}
