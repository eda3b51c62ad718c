import type postgres from "postgres";
import { prepared } from "../db.ts";
import { iso, isoNN } from "../../http/schemas.ts";
import { FINDING_COLUMNS, findingOut } from "../../analysis/model.ts";
import { readiness, type SessionRow } from "./row.ts";

/** A session's materialized analysis reads: tldr, problems, costs, tool schemas, intents, metrics. */

interface Ctx {
  sql: postgres.Sql | postgres.TransactionSql;
  serviceName: string;
  session: SessionRow;
  windowSeconds: number;
}

function header({ serviceName, session, windowSeconds }: Ctx) {
  return {
    sessionId: session.session_id,
    serviceName,
    ...readiness(session, windowSeconds),
    maturationCount: session.maturation_count,
    computedAt: iso(session.computed_at),
  };
}

async function analysisColumns(
  sql: postgres.Sql | postgres.TransactionSql,
  session: SessionRow,
  columns: string,
): Promise<postgres.Row | null> {
  if (session.computed_at === null) return null;
  const [row] = await prepared(sql, `select ${columns} from session_analyses where session_pk = $1`, [session.pk]);
  return row ?? null;
}

export async function sessionTldr(ctx: Ctx) {
  const row = await analysisColumns(ctx.sql, ctx.session, "tldr, tldr_source");
  return { ...header(ctx), tldr: row?.tldr ?? null, source: row?.tldr_source ?? null };
}

/** The session's findings, most severe first, each with the issue it belongs to. */
export async function sessionProblems(ctx: Ctx) {
  const rows = await prepared(
    ctx.sql,
    `select ${FINDING_COLUMNS}, i.title as issue_title from findings f join issues i on i.id = f.issue_id
     where f.session_pk = $1
     order by case f.severity when 'critical' then 0 when 'high' then 1 when 'medium' then 2 when 'low' then 3 else 4 end, f.occurred_at, f.id`,
    [ctx.session.pk],
  );
  const bySeverity: Record<string, number> = {};
  for (const r of rows) bySeverity[r.severity] = (bySeverity[r.severity] ?? 0) + 1;
  return {
    ...header(ctx),
    problemCount: rows.length,
    bySeverity,
    problems: rows.map((r) => ({ ...findingOut(r, ctx.serviceName), issueTitle: r.issue_title })),
  };
}

export async function sessionCostByModel(ctx: Ctx) {
  const row = await analysisColumns(ctx.sql, ctx.session, "cost_usd, cost_by_model");
  return {
    ...header(ctx),
    currency: "USD" as const,
    totalCostUsd: row?.cost_usd ?? null,
    models: (row?.cost_by_model as Record<string, unknown>[]) ?? [],
  };
}

export async function sessionToolCosts(ctx: Ctx) {
  const row = await analysisColumns(ctx.sql, ctx.session, "tool_costs");
  return { ...header(ctx), currency: "USD" as const, tools: (row?.tool_costs as Record<string, unknown>[]) ?? [] };
}

export async function sessionToolSchemas(ctx: Ctx) {
  const rows = await ctx.sql`
    select ts.id, ts.name, ts.schema_hash, ts.schema, ts.first_seen_at, ts.last_seen_at
    from session_tool_schemas sts join tool_schemas ts on ts.id = sts.tool_schema_id
    where sts.session_pk = ${ctx.session.pk} order by ts.name, ts.first_seen_at`;
  return {
    ...header(ctx),
    toolSchemas: rows.map((r) => ({
      toolSchemaId: r.id,
      name: r.name,
      schemaHash: r.schema_hash,
      schema: r.schema,
      firstSeenAt: isoNN(r.first_seen_at),
      lastSeenAt: isoNN(r.last_seen_at),
    })),
  };
}

export async function sessionIntents(ctx: Ctx) {
  const rows = await ctx.sql`
    select d.id, d.name, d.description, si.score, si.evidence
    from session_intents si join intent_definitions d on d.id = si.intent_id
    where si.session_pk = ${ctx.session.pk} order by si.score desc, d.name`;
  return {
    ...header(ctx),
    intents: rows.map((r) => ({
      intentId: r.id,
      name: r.name,
      description: r.description,
      score: r.score,
      evidence: r.evidence ?? {},
    })),
  };
}

/** The flat metrics object of docs/analysis.md; null until the first maturation. */
export async function sessionMetrics(ctx: Ctx) {
  const row = await analysisColumns(ctx.sql, ctx.session, "metrics, cost_usd, problems");
  return {
    ...header(ctx),
    metrics: row ? { costUsd: row.cost_usd ?? null, problems: row.problems, ...(row.metrics as object) } : null,
  };
}

export { header as sessionHeader };
