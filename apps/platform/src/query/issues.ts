import type postgres from "postgres";
import { prepared } from "./db.ts";
import { inSnapshot } from "./snapshot.ts";
import { notFound } from "@cellar/shared/errors";
import { filteredBody } from "../http/filters.ts";
import type { FilterSet, PagedQuery } from "./filters.ts";
import { runFiltered } from "./paged.ts";
import { FINDING_COLUMNS, findingOut, ISSUE_COLUMNS, issueOut } from "../analysis/model.ts";
import type { ServiceRef } from "../auth/principal.ts";

type Svc = ServiceRef & { tenantId: string };
const SEVERITY = ["low", "medium", "high", "critical"] as const;
const severityRank = (alias: string) =>
  `(case ${alias}.severity when 'critical' then 4 when 'high' then 3 when 'medium' then 2 when 'low' then 1 else 0 end)`;

export const ISSUE_FILTERS: FilterSet = {
  fields: {
    issueId: { type: "string", expr: "i.id::text" },
    fingerprint: { type: "string", expr: "i.fingerprint" },
    detector: { type: "string", expr: "i.detector", sortable: true, notNull: true },
    title: { type: "string", expr: "i.title", sortable: true, notNull: true },
    severity: { type: "enum", expr: "i.severity", values: SEVERITY },
    severityRank: { type: "number", expr: severityRank("i"), sortable: true, notNull: true, integer: true },
    firstSeenAt: { type: "datetime", expr: "i.first_seen_at", sortable: true, notNull: true },
    lastSeenAt: { type: "datetime", expr: "i.last_seen_at", sortable: true, notNull: true },
    occurrences: { type: "number", expr: "i.occurrences", sortable: true, notNull: true, integer: true },
    affectedSessions: { type: "number", expr: "i.affected_sessions", sortable: true, notNull: true, integer: true },
  },
};
export const FINDING_FILTERS: FilterSet = {
  fields: {
    findingId: { type: "string", expr: "f.id::text" },
    issueId: { type: "string", expr: "f.issue_id::text" },
    sessionId: { type: "string", expr: "f.session_id", sortable: true, notNull: true },
    traceId: { type: "string", expr: "f.trace_id" },
    spanId: { type: "string", expr: "f.span_id" },
    detector: { type: "string", expr: "f.detector", sortable: true, notNull: true },
    fingerprint: { type: "string", expr: "f.fingerprint" },
    title: { type: "string", expr: "f.title", sortable: true, notNull: true },
    severity: { type: "enum", expr: "f.severity", values: SEVERITY },
    severityRank: { type: "number", expr: severityRank("f"), sortable: true, notNull: true, integer: true },
    occurredAt: { type: "datetime", expr: "f.occurred_at", sortable: true, notNull: true },
  },
};

export const IssuesFilteredBody = filteredBody("service_name", "skip_total_count", ISSUE_FILTERS);
export const FindingsFilteredBody = filteredBody("service_name", "skip_total_count", FINDING_FILTERS);

/** Issues with at least one occurrence (an issue can drop to 0 on re-maturation: hidden). */
export async function filterIssues(sql: postgres.Sql, svc: Svc, q: PagedQuery) {
  const { rows, pagination } = await runFiltered(
    sql,
    {
      set: ISSUE_FILTERS,
      columns: ISSUE_COLUMNS,
      table: "issues",
      alias: "i",
      scope: sql`i.tenant_id = ${svc.tenantId} and i.trace_service_id = ${svc.id} and i.occurrences > 0`,
      defaultSort: "lastSeenAt",
      tiebreak: "i.id",
    },
    q,
  );
  return { issues: rows.map((r) => issueOut(r, svc.name)), pagination };
}

export async function filterFindings(sql: postgres.Sql, svc: Svc, q: PagedQuery) {
  const { rows, pagination } = await runFiltered(
    sql,
    {
      set: FINDING_FILTERS,
      columns: FINDING_COLUMNS,
      table: "findings",
      alias: "f",
      scope: sql`f.tenant_id = ${svc.tenantId} and f.trace_service_id = ${svc.id}`,
      defaultSort: "occurredAt",
      tiebreak: "f.id",
    },
    q,
  );
  return { findings: rows.map((r) => findingOut(r, svc.name)), pagination };
}

export interface Range {
  from: Date | null;
  to: Date | null;
}
const inRange = (sql: postgres.Sql, col: string, r: Range) =>
  sql`${r.from ? sql`${sql.unsafe(col)} >= ${r.from}` : sql`true`} and ${r.to ? sql`${sql.unsafe(col)} < ${r.to}` : sql`true`}`;
const countBy = (rows: postgres.Row[]) => Object.fromEntries(rows.map((r) => [r.k, r.n]));

/** Counts over findings in the range (all time when no range), so the numbers add up. */
export async function issueStats(sql: postgres.Sql, svc: Svc, range: Range) {
  const where = sql`f.tenant_id = ${svc.tenantId} and f.trace_service_id = ${svc.id} and ${inRange(sql, "f.occurred_at", range)}`;
  const [totals, sev, det, top, fresh] = await inSnapshot(sql, (tx) =>
    Promise.all([
      tx`select count(distinct f.issue_id)::int as issues, count(*)::int as occurrences, count(distinct f.session_pk)::int as sessions from findings f where ${where}`,
      tx`select i.severity as k, count(distinct i.id)::int as n from findings f join issues i on i.id = f.issue_id where ${where} group by 1`,
      tx`select i.detector as k, count(distinct i.id)::int as n from findings f join issues i on i.id = f.issue_id where ${where} group by 1`,
      tx`select ${sql.unsafe(ISSUE_COLUMNS)}, x.n from (select f.issue_id, count(*)::int as n from findings f where ${where} group by 1 order by 2 desc, 1 limit 5) x
        join issues i on i.id = x.issue_id order by x.n desc, i.id`,
      tx`select count(*)::int as n from issues i where i.tenant_id = ${svc.tenantId} and i.trace_service_id = ${svc.id} and i.occurrences > 0 and ${inRange(sql, "i.first_seen_at", range)}`,
    ]),
  );
  return {
    serviceName: svc.name,
    from: range.from?.toISOString() ?? null,
    to: range.to?.toISOString() ?? null,
    totalIssues: totals[0].issues,
    newIssues: fresh[0].n,
    occurrences: totals[0].occurrences,
    affectedSessions: totals[0].sessions,
    bySeverity: countBy(sev),
    byDetector: countBy(det),
    topIssues: top.map((r) => ({ ...issueOut(r, svc.name), occurrencesInRange: r.n })),
  };
}

export async function findingStats(sql: postgres.Sql, svc: Svc, range: Range) {
  const where = sql`f.tenant_id = ${svc.tenantId} and f.trace_service_id = ${svc.id} and ${inRange(sql, "f.occurred_at", range)}`;
  const [totals, sev, det, days] = await inSnapshot(sql, (tx) =>
    Promise.all([
      tx`select count(*)::int as n, count(distinct f.session_pk)::int as sessions from findings f where ${where}`,
      tx`select f.severity as k, count(*)::int as n from findings f where ${where} group by 1`,
      tx`select f.detector as k, count(*)::int as n from findings f where ${where} group by 1`,
      tx`select to_char(f.occurred_at at time zone 'UTC', 'YYYY-MM-DD') as d, count(*)::int as n from findings f where ${where} group by 1 order by 1`,
    ]),
  );
  return {
    serviceName: svc.name,
    from: range.from?.toISOString() ?? null,
    to: range.to?.toISOString() ?? null,
    total: totals[0].n,
    sessionsWithFindings: totals[0].sessions,
    bySeverity: countBy(sev),
    byDetector: countBy(det),
    byDay: days.map((r) => ({ date: r.d, count: r.n })),
  };
}

/** One issue: when, where and in which sessions it happens, and its latest findings. */
export async function issueBreakdown(sql: postgres.Sql, svc: Svc, issueId: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(issueId)) throw notFound("no such issue");
  // The issue and its breakdown in one snapshot: a finding recorded meanwhile is in all or none.
  const read = await inSnapshot(sql, async (tx) => {
    const [issue] = await prepared(
      tx,
      `select ${ISSUE_COLUMNS} from issues i where i.id = $1 and i.tenant_id = $2 and i.trace_service_id = $3 and i.occurrences > 0`,
      [issueId, svc.tenantId, svc.id],
    );
    if (!issue) return null;
    return [
      issue,
      ...(await Promise.all([
        tx`select to_char(f.occurred_at at time zone 'UTC', 'YYYY-MM-DD') as d, count(*)::int as n, count(distinct f.session_pk)::int as s
          from findings f where f.issue_id = ${issueId} group by 1 order by 1`,
        tx`select s.environment, count(*)::int as n from findings f join sessions s on s.id = f.session_pk where f.issue_id = ${issueId} group by 1 order by 2 desc, 1`,
        tx`select f.session_id, count(*)::int as n, max(f.occurred_at) as last from findings f where f.issue_id = ${issueId} group by 1 order by 2 desc, 3 desc limit 10`,
        tx`select ${sql.unsafe(FINDING_COLUMNS)} from findings f where f.issue_id = ${issueId} order by f.occurred_at desc, f.id limit 10`,
      ])),
    ] as const;
  });
  if (!read) throw notFound("no such issue");
  const [issue, days, envs, sessions, recent] = read;
  return {
    issue: issueOut(issue, svc.name),
    byDay: days.map((r) => ({ date: r.d, occurrences: r.n, sessions: r.s })),
    byEnvironment: envs.map((r) => ({ environment: r.environment ?? null, occurrences: r.n })),
    topSessions: sessions.map((r) => ({
      sessionId: r.session_id,
      occurrences: r.n,
      lastOccurredAt: new Date(r.last).toISOString(),
    })),
    recentFindings: recent.map((r) => findingOut(r, svc.name)),
  };
}
