import type postgres from "postgres";
import { createHash } from "node:crypto";
import { canonicalJson } from "@cellar/shared/crypto";
import { badRequest, forbidden, notFound } from "@cellar/shared/errors";
import { scoreProblem } from "@cellar/shared/ingest-rules";
import type { ScorePayload } from "@cellar/shared/payloads";
import { scoreValueColumns } from "@cellar/shared/scores/values";
import { hasRole, type Principal, resolveService, type ServiceRef } from "../auth/principal.ts";
import { SCORE_COLUMNS, scoreConfigOut, scoreOut, type ScoreRollups } from "./model.ts";

type Sql = postgres.Sql;

/** A declared name's rules, checked on the platform write (ingest cannot read them; docs/scores.md). */
function configProblem(config: postgres.Row | undefined, value: number | boolean | string): string | null {
  if (!config) return null;
  const { data_type } = scoreValueColumns(value);
  if (data_type !== config.data_type)
    return `invalid value: ${JSON.stringify(config.name)} is declared ${config.data_type}, got a ${data_type} value`;
  if (data_type === "categorical" && config.categories && !config.categories.includes(value))
    return `invalid value: ${JSON.stringify(value)} is not one of ${config.categories.join(", ")}`;
  if (typeof value === "number") {
    if (config.min_value !== null && value < config.min_value)
      return `invalid value: below min_value ${config.min_value}`;
    if (config.max_value !== null && value > config.max_value)
      return `invalid value: above max_value ${config.max_value}`;
  }
  return null;
}

/**
 * Stores one score; a second submission with the same idempotency key (given, or derived from
 * the body) returns the first one unchanged, `created: false`.
 */
export async function createScore(
  sql: Sql,
  svc: ServiceRef & { tenantId: string },
  input: ScorePayload & { source: NonNullable<ScorePayload["source"]> },
  authorUserId: string,
) {
  const [config] = await sql`select * from score_configs where trace_service_id = ${svc.id} and name = ${input.name}`;
  const problem = configProblem(config, input.value);
  if (problem) throw badRequest(problem);
  const key =
    input.idempotency_key ??
    `body:${createHash("sha256")
      .update(`${svc.tenantId}\nscore\n${svc.name}\n${canonicalJson(input)}`)
      .digest("hex")}`;
  const v = scoreValueColumns(input.value);
  const inserted = await sql`
    insert into scores (tenant_id, trace_service_id, target, session_id, trace_id, name, data_type, value, label, comment, source, idempotency_key, author_user_id, environment)
    values (${svc.tenantId}, ${svc.id}, ${input.session_id !== undefined ? "session" : "trace"}, ${input.session_id ?? null}, ${input.trace_id ?? null},
      ${input.name}, ${v.data_type}, ${v.value}, ${v.label}, ${input.comment ?? null}, ${input.source}, ${key}, ${authorUserId}, ${input.environment ?? null})
    on conflict (trace_service_id, idempotency_key, tenant_id) do nothing
    returning ${sql.unsafe(SCORE_COLUMNS.replaceAll("sc.", ""))}`;
  if (inserted.length) return { created: true, score: scoreOut(inserted[0], svc.name) };
  const [existing] = await sql`
    select ${sql.unsafe(SCORE_COLUMNS)} from scores sc where sc.trace_service_id = ${svc.id} and sc.idempotency_key = ${key}`;
  return { created: false, score: scoreOut(existing, svc.name) };
}

/** Scores of one session or one trace, oldest first (at most `limit`). */
export async function listScores(
  sql: Sql | postgres.TransactionSql,
  svc: ServiceRef,
  of: { sessionId: string } | { traceId: string },
  limit = 500,
) {
  const where =
    "sessionId" in of
      ? sql`sc.session_id = ${of.sessionId}`
      : sql`sc.trace_id = ${(of as { traceId: string }).traceId}`;
  const rows = await sql`
    select ${sql.unsafe(SCORE_COLUMNS)} from scores sc where sc.trace_service_id = ${svc.id} and ${where}
    order by sc.created_at, sc.id limit ${limit}`;
  return rows.map((r) => scoreOut(r, svc.name));
}

/** Count and mean per name (label counts for categorical names) of the given sessions, in one query. */
export async function sessionScoreRollups(
  sql: Sql | postgres.TransactionSql,
  serviceId: string,
  sessionIds: string[],
): Promise<Map<string, ScoreRollups>> {
  const out = new Map<string, ScoreRollups>();
  if (sessionIds.length === 0) return out;
  const rows = await sql<{ session_id: string; name: string; label: string | null; n: number; mean: number | null }[]>`
    select session_id, name, label, count(*)::int as n, avg(value)::float8 as mean from scores
    where trace_service_id = ${serviceId} and session_id = any(${sessionIds}::text[])
    group by session_id, name, label`;
  for (const r of rows) {
    const rollups = out.get(r.session_id) ?? {};
    out.set(r.session_id, rollups);
    const one = (rollups[r.name] ??= { count: 0, mean: null });
    one.count += r.n;
    if (r.label === null) one.mean = r.mean;
    else one.labels = { ...one.labels, [r.label]: r.n };
  }
  return out;
}

export async function listScoreConfigs(sql: Sql, svc: ServiceRef) {
  const rows = await sql`select * from score_configs where trace_service_id = ${svc.id} order by name`;
  return { configs: rows.map(scoreConfigOut) };
}

export async function putScoreConfig(
  sql: Sql,
  svc: ServiceRef & { tenantId: string },
  name: string,
  body: {
    data_type: string;
    categories?: string[];
    min_value?: number;
    max_value?: number;
    description?: string;
  },
) {
  if (body.categories && body.data_type !== "categorical")
    throw badRequest("invalid categories: only a categorical score has categories");
  if ((body.min_value !== undefined || body.max_value !== undefined) && body.data_type !== "numeric")
    throw badRequest("invalid min_value: only a numeric score has bounds");
  if (body.min_value !== undefined && body.max_value !== undefined && body.min_value > body.max_value)
    throw badRequest("invalid min_value: must not be above max_value");
  const [row] = await sql`
    insert into score_configs (tenant_id, trace_service_id, name, data_type, categories, min_value, max_value, description)
    values (${svc.tenantId}, ${svc.id}, ${name}, ${body.data_type}, ${body.categories ?? null}, ${body.min_value ?? null},
      ${body.max_value ?? null}, ${body.description ?? null})
    on conflict (trace_service_id, name, tenant_id) do update set data_type = excluded.data_type, categories = excluded.categories,
      min_value = excluded.min_value, max_value = excluded.max_value, description = excluded.description, updated_at = now()
    returning *`;
  return scoreConfigOut(row);
}

export async function deleteScoreConfig(sql: Sql, svc: ServiceRef, name: string) {
  const gone =
    await sql`delete from score_configs where trace_service_id = ${svc.id} and name = ${name} returning name`;
  if (!gone.length) throw notFound("no such score config");
}

const NAME_PATTERN = /^[^\s\u0000-\u001f\u007f][^\u0000-\u001f\u007f]{0,127}$/;

function requireRole(p: Principal, min: "member" | "admin", what: string) {
  if (!hasRole(p, min)) throw forbidden(`${what} needs role ${min} or higher`);
}

async function tenantService(sql: Sql, p: Principal, name: string) {
  return { ...(await resolveService(sql, p, name)), tenantId: p.tenantId };
}

/** POST /scores (member and above): validated as ingest validates a score, then stored once per idempotency key. */
export async function recordScore(sql: Sql, p: Principal, body: unknown) {
  requireRole(p, "member", "writing a score");
  const problem = scoreProblem(body);
  if (problem) throw badRequest(problem);
  const given = body as ScorePayload;
  if (given.service_name === undefined) throw badRequest("invalid service_name: required");
  const svc = await tenantService(sql, p, given.service_name);
  return createScore(sql, svc, { ...given, source: given.source ?? "api" }, p.userId);
}

/** PUT /scores/configs/{service}/{name} (admin and above). */
export async function declareScoreName(
  sql: Sql,
  p: Principal,
  serviceName: string,
  name: string,
  body: Parameters<typeof putScoreConfig>[3],
) {
  requireRole(p, "admin", "declaring a score name");
  if (!NAME_PATTERN.test(name))
    throw badRequest("invalid name: 1 to 128 characters, no control characters, not starting with a space");
  return putScoreConfig(sql, await tenantService(sql, p, serviceName), name, body);
}

/** DELETE /scores/configs/{service}/{name} (admin and above); the scores of that name stay. */
export async function removeScoreName(sql: Sql, p: Principal, serviceName: string, name: string) {
  requireRole(p, "admin", "removing a score name");
  await deleteScoreConfig(sql, await tenantService(sql, p, serviceName), name);
}
