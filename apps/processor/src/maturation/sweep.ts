import { matureSessions, matureTraces, publishAll, sessionMessage, traceMessage, type MaturationDeps, type SessionRow, type TraceRow } from "./mature";

export interface SweepResult {
  sessions: number;
  traces: number;
  /** MATURED messages that were owed (committed, never recorded as published) and are now sent. */
  republished: number;
}

/**
 * The safety net: matures sessions and traces idle far past the window whose marker never came
 * (a processor down longer than the marker TTL, a lost refresh), and publishes MATURED messages
 * still owed after a crash whose marker was already gone. Markers are the mechanism.
 */
export async function sweepIdle(deps: MaturationDeps, graceSeconds: number, limit = 500): Promise<SweepResult> {
  const idleFor = deps.windowSeconds + graceSeconds;
  const sessions = await deps.sql<{ id: string }[]>`
    select id from sessions where status = 'active' and last_ingested_at < now() - make_interval(secs => ${idleFor})
    order by last_ingested_at limit ${limit}`;
  const traces = await deps.sql<{ id: string }[]>`
    select id from traces where status = 'active' and ingested_at < now() - make_interval(secs => ${idleFor})
    order by ingested_at limit ${limit}`;
  const count = (outcomes: Map<string, string>) => [...outcomes.values()].filter((o) => o === "matured").length;
  let s = 0, t = 0;
  for (let i = 0; i < sessions.length; i += 50) s += count(await matureSessions(deps, sessions.slice(i, i + 50).map((r) => r.id)));
  for (let i = 0; i < traces.length; i += 50) t += count(await matureTraces(deps, traces.slice(i, i + 50).map((r) => r.id)));

  const owedSessions = await deps.sql<SessionRow[]>`
    select s.id, s.tenant_id, s.trace_service_id, s.session_id, s.status, s.maturation_count, s.matured_at, s.published_count, ts.name as service_name
    from sessions s join trace_services ts on ts.id = s.trace_service_id
    where s.published_count < s.maturation_count and s.matured_at < now() - make_interval(secs => ${graceSeconds})
    order by s.matured_at limit ${limit}`;
  await publishAll(deps, owedSessions.map(sessionMessage));
  const owedTraces = await deps.sql<TraceRow[]>`
    select t.id, t.tenant_id, t.trace_service_id, t.trace_id, t.session_id, t.status, t.maturation_count, t.matured_at, t.published_count, ts.name as service_name
    from traces t join trace_services ts on ts.id = t.trace_service_id
    where t.published_count < t.maturation_count and t.matured_at < now() - make_interval(secs => ${graceSeconds})
    order by t.matured_at limit ${limit}`;
  await publishAll(deps, owedTraces.map(traceMessage));
  const r = owedSessions.length + owedTraces.length;
  if (s || t || r) deps.logger.warn("sweep matured or published what its marker missed", { sessions: s, traces: t, republished: r });
  return { sessions: s, traces: t, republished: r };
}
