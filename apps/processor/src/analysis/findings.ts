import type postgres from "postgres";
import type { SessionRow } from "../maturation/mature";
import type { Finding } from "./detectors";

/**
 * Replaces the session's findings and adjusts the issues they belong to by the difference, in
 * the maturation transaction: occurrences and affected sessions stay exact across re-maturations
 * (the session's old findings are subtracted, its new ones added). Issue rows are touched in
 * fingerprint order so concurrent maturations cannot deadlock on them.
 */
export async function persistFindings(tx: postgres.TransactionSql, s: SessionRow, findings: Finding[], replace: boolean): Promise<void> {
  const old = replace
    ? await tx<{ fingerprint: string; n: number }[]>`
        with gone as (delete from findings where session_pk = ${s.id} returning fingerprint)
        select fingerprint, count(*)::int as n from gone group by fingerprint`
    : [];
  const fresh = new Map<string, { n: number; first: Date; last: Date; f: Finding }>();
  for (const f of findings) {
    const g = fresh.get(f.fingerprint);
    if (!g) fresh.set(f.fingerprint, { n: 1, first: f.occurredAt, last: f.occurredAt, f });
    else {
      g.n++;
      if (f.occurredAt < g.first) g.first = f.occurredAt;
      if (f.occurredAt > g.last) g.last = f.occurredAt;
    }
  }
  const oldBy = new Map(old.map((o) => [o.fingerprint, o.n]));
  const fingerprints = [...new Set([...oldBy.keys(), ...fresh.keys()])].sort();
  if (fingerprints.length === 0) return;
  const deltas = fingerprints.map((fp) => {
    const before = oldBy.get(fp) ?? 0;
    const now = fresh.get(fp);
    const after = now?.n ?? 0;
    const sessionDelta = (after > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
    const sample = now?.f;
    return {
      fingerprint: fp, occ: after - before, sessions: sessionDelta,
      detector: sample?.detector ?? null, title: sample?.title ?? null, severity: sample?.severity ?? null,
      first: now?.first.toISOString() ?? null, last: now?.last.toISOString() ?? null,
    };
  });
  // New fingerprints get a row; existing ones get their counts moved by the delta. A removal-only
  // delta carries no times (infinity/-infinity leave first/last seen as they were).
  const issueRows = await tx<{ id: string; fingerprint: string }[]>`
    insert into issues as i (tenant_id, trace_service_id, fingerprint, detector, title, severity, first_seen_at, last_seen_at, occurrences, affected_sessions)
    select ${s.tenant_id}, ${s.trace_service_id}, x.fingerprint, coalesce(x.detector, 'unknown'), coalesce(x.title, ''), coalesce(x.severity, 'low'),
      coalesce(x.first, 'infinity'), coalesce(x.last, '-infinity'), greatest(x.occ, 0), greatest(x.sessions, 0)
    from jsonb_to_recordset(${tx.json(deltas as any)}::jsonb) as x(fingerprint text, occ int, sessions int, detector text, title text, severity text, first timestamptz, last timestamptz)
    order by x.fingerprint
    on conflict (trace_service_id, fingerprint) do update set
      occurrences = greatest(i.occurrences + (select d.occ from jsonb_to_recordset(${tx.json(deltas as any)}::jsonb) as d(fingerprint text, occ int) where d.fingerprint = excluded.fingerprint), 0),
      affected_sessions = greatest(i.affected_sessions + (select d.sessions from jsonb_to_recordset(${tx.json(deltas as any)}::jsonb) as d(fingerprint text, sessions int) where d.fingerprint = excluded.fingerprint), 0),
      first_seen_at = least(i.first_seen_at, excluded.first_seen_at),
      last_seen_at = greatest(i.last_seen_at, excluded.last_seen_at),
      title = case when excluded.title = '' then i.title else excluded.title end,
      severity = case when excluded.title = '' then i.severity else excluded.severity end
    returning i.id, i.fingerprint`;
  if (findings.length === 0) return;
  const issueOf = new Map(issueRows.map((r) => [r.fingerprint, r.id]));
  const rows = findings.map((f) => ({
    issue_id: issueOf.get(f.fingerprint), trace_id: f.traceId, span_id: f.spanId, detector: f.detector, fingerprint: f.fingerprint,
    severity: f.severity, title: f.title, evidence: f.evidence, occurred_at: f.occurredAt.toISOString(),
  }));
  await tx`
    insert into findings (tenant_id, trace_service_id, session_pk, session_id, issue_id, trace_id, span_id, detector, fingerprint, severity, title, evidence, occurred_at)
    select ${s.tenant_id}, ${s.trace_service_id}, ${s.id}, ${s.session_id}, issue_id, trace_id, span_id, detector, fingerprint, severity, title, evidence, occurred_at
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(issue_id uuid, trace_id text, span_id text, detector text, fingerprint text,
      severity text, title text, evidence jsonb, occurred_at timestamptz)`;
}
