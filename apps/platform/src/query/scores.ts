import type postgres from "postgres";
import { resolveService, type Principal } from "../auth/principal.ts";
import { listScoreConfigs, listScores } from "../scores/service.ts";

/**
 * Reads of scores (docs/scores.md) for a service the principal can see: one session's or one
 * trace's scores (also before the session or trace exists), and the names the service declares.
 * One statement each after the service check; the statements are in scores/service.ts.
 */

export async function scoresOfSession(sql: postgres.Sql, p: Principal, serviceName: string, sessionId: string) {
  return { scores: await listScores(sql, await resolveService(sql, p, serviceName), { sessionId }) };
}

export async function scoresOfTrace(sql: postgres.Sql, p: Principal, serviceName: string, traceId: string) {
  return { scores: await listScores(sql, await resolveService(sql, p, serviceName), { traceId }) };
}

export async function scoreConfigsOf(sql: postgres.Sql, p: Principal, serviceName: string) {
  return listScoreConfigs(sql, await resolveService(sql, p, serviceName));
}
