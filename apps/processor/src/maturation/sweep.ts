import { matureSession, matureTrace, type MaturationDeps } from "./mature";

/**
 * The safety net: matures sessions and traces idle far past the window whose marker never came
 * (a processor down longer than the marker TTL, a lost refresh). Markers are the mechanism.
 */
export async function sweepIdle(deps: MaturationDeps, graceSeconds: number, limit = 500): Promise<{ sessions: number; traces: number }> {
  const idleFor = deps.windowSeconds + graceSeconds;
  const sessions = await deps.sql<{ id: string }[]>`
    select id from sessions where status = 'active' and last_ingested_at < now() - make_interval(secs => ${idleFor})
    order by last_ingested_at limit ${limit}`;
  const traces = await deps.sql<{ id: string }[]>`
    select id from traces where status = 'active' and ingested_at < now() - make_interval(secs => ${idleFor})
    order by ingested_at limit ${limit}`;
  let s = 0, t = 0;
  for (const row of sessions) if ((await matureSession(deps, row.id)) === "matured") s++;
  for (const row of traces) if ((await matureTrace(deps, row.id)) === "matured") t++;
  if (s || t) deps.logger.warn("sweep matured entities whose activity marker was lost", { sessions: s, traces: t });
  return { sessions: s, traces: t };
}
