import type postgres from "postgres";
import { t } from "elysia";
import { Iso, isoNN, JsonObject, Nullable, Pagination } from "../http/schemas.ts";

/** Response shapes of issues and findings, and the row mappers that produce them (kept together). */
export const Issue = t.Object({
  issueId: t.String(),
  serviceName: t.String(),
  fingerprint: t.String(),
  detector: t.String(),
  title: t.String(),
  severity: t.String({ description: "low | medium | high | critical" }),
  firstSeenAt: Iso,
  lastSeenAt: Iso,
  occurrences: t.Integer(),
  affectedSessions: t.Integer(),
});
export const ISSUE_COLUMNS =
  "i.id, i.fingerprint, i.detector, i.title, i.severity, i.first_seen_at, i.last_seen_at, i.occurrences, i.affected_sessions";
export const issueOut = (r: postgres.Row, serviceName: string) => ({
  issueId: r.id,
  serviceName,
  fingerprint: r.fingerprint,
  detector: r.detector,
  title: r.title,
  severity: r.severity,
  firstSeenAt: isoNN(r.first_seen_at),
  lastSeenAt: isoNN(r.last_seen_at),
  occurrences: r.occurrences,
  affectedSessions: r.affected_sessions,
});
export const Finding = t.Object({
  findingId: t.String(),
  issueId: t.String(),
  serviceName: t.String(),
  sessionId: t.String(),
  traceId: Nullable(t.String()),
  spanId: Nullable(t.String()),
  detector: t.String(),
  fingerprint: t.String(),
  severity: t.String({ description: "low | medium | high | critical" }),
  title: t.String(),
  evidence: JsonObject,
  occurredAt: Iso,
  createdAt: Iso,
});
export const FINDING_COLUMNS =
  "f.id, f.issue_id, f.session_id, f.trace_id, f.span_id, f.detector, f.fingerprint, f.severity, f.title, f.evidence, f.occurred_at, f.created_at";
export const findingOut = (r: postgres.Row, serviceName: string) => ({
  findingId: r.id,
  issueId: r.issue_id,
  serviceName,
  sessionId: r.session_id,
  traceId: r.trace_id ?? null,
  spanId: r.span_id ?? null,
  detector: r.detector,
  fingerprint: r.fingerprint,
  severity: r.severity,
  title: r.title,
  evidence: r.evidence ?? {},
  occurredAt: isoNN(r.occurred_at),
  createdAt: isoNN(r.created_at),
});

export const IssuesPage = t.Object({ issues: t.Array(Issue), pagination: Pagination });
export const FindingsPage = t.Object({ findings: t.Array(Finding), pagination: Pagination });
const Counts = t.Record(t.String(), t.Integer());
export const IssueStats = t.Object({
  serviceName: t.String(),
  from: Nullable(Iso),
  to: Nullable(Iso),
  totalIssues: t.Integer({ description: "issues with a finding in the range" }),
  newIssues: t.Integer({ description: "issues first seen in the range" }),
  occurrences: t.Integer(),
  affectedSessions: t.Integer(),
  bySeverity: Counts,
  byDetector: Counts,
  topIssues: t.Array(t.Composite([Issue, t.Object({ occurrencesInRange: t.Integer() })])),
});
export const FindingStats = t.Object({
  serviceName: t.String(),
  from: Nullable(Iso),
  to: Nullable(Iso),
  total: t.Integer(),
  sessionsWithFindings: t.Integer(),
  bySeverity: Counts,
  byDetector: Counts,
  byDay: t.Array(t.Object({ date: t.String({ format: "date" }), count: t.Integer() })),
});
export const IssueBreakdown = t.Object({
  issue: Issue,
  byDay: t.Array(t.Object({ date: t.String({ format: "date" }), occurrences: t.Integer(), sessions: t.Integer() })),
  byEnvironment: t.Array(t.Object({ environment: Nullable(t.String()), occurrences: t.Integer() })),
  topSessions: t.Array(t.Object({ sessionId: t.String(), occurrences: t.Integer(), lastOccurredAt: Iso })),
  recentFindings: t.Array(Finding),
});

export const StatsBody = t.Object(
  {
    from: t.Optional(t.String({ format: "date-time", error: "invalid from: must be an ISO 8601 date-time" })),
    to: t.Optional(t.String({ format: "date-time", error: "invalid to: must be an ISO 8601 date-time" })),
  },
  { additionalProperties: false },
);
