import type postgres from "postgres";
import type { SessionRow } from "./store.ts";
import type { Finding } from "../analysis/detectors.ts";

interface IssueDelta {
  trace_service_id: string;
  tenant_id: string;
  fingerprint: string;
  occ: number;
  sessions: number;
  detector: string | null;
  title: string | null;
  severity: string | null;
  first: string | null;
  last: string | null;
}

/**
 * Replaces the findings of a batch of sessions and moves the issues they belong to by the
 * difference, in the maturation transaction: each session's old findings are subtracted and its
 * new ones added, so occurrences and affected sessions stay exact across re-maturations. Issue
 * rows are locked in (service, fingerprint) order so concurrent maturations cannot deadlock.
 */
export async function persistFindings(
  tx: postgres.TransactionSql,
  list: Array<{ row: SessionRow; findings: Finding[]; replace: boolean }>,
): Promise<void> {
  const replaced = list.filter((x) => x.replace).map((x) => x.row.id);
  const old = replaced.length
    ? await tx<{ session_pk: string; fingerprint: string; n: number }[]>`
        with gone as (delete from findings where session_pk = any(${tx.array(replaced)}::uuid[]) returning session_pk, fingerprint)
        select session_pk, fingerprint, count(*)::int as n from gone group by session_pk, fingerprint`
    : [];
  const oldOf = new Map<string, Map<string, number>>();
  for (const o of old) oldOf.set(o.session_pk, (oldOf.get(o.session_pk) ?? new Map()).set(o.fingerprint, o.n));

  const deltas = new Map<string, IssueDelta>();
  const delta = (row: SessionRow, fingerprint: string) => {
    const key = `${row.trace_service_id}\u0000${fingerprint}`;
    let d = deltas.get(key);
    if (!d)
      deltas.set(
        key,
        (d = {
          trace_service_id: row.trace_service_id,
          tenant_id: row.tenant_id,
          fingerprint,
          occ: 0,
          sessions: 0,
          detector: null,
          title: null,
          severity: null,
          first: null,
          last: null,
        }),
      );
    return d;
  };
  for (const { row, findings } of list) {
    const before = oldOf.get(row.id) ?? new Map<string, number>();
    const after = new Map<string, number>();
    for (const f of findings) {
      after.set(f.fingerprint, (after.get(f.fingerprint) ?? 0) + 1);
      const d = delta(row, f.fingerprint);
      const at = f.occurredAt.toISOString();
      d.detector = f.detector;
      d.title = f.title;
      d.severity = f.severity;
      if (!d.first || at < d.first) d.first = at;
      if (!d.last || at > d.last) d.last = at;
    }
    for (const fp of new Set([...before.keys(), ...after.keys()])) {
      const d = delta(row, fp);
      const b = before.get(fp) ?? 0;
      const a = after.get(fp) ?? 0;
      d.occ += a - b;
      d.sessions += (a > 0 ? 1 : 0) - (b > 0 ? 1 : 0);
    }
  }
  if (deltas.size === 0) return;
  const rows = [...deltas.values()].sort(
    (x, y) => x.trace_service_id.localeCompare(y.trace_service_id) || x.fingerprint.localeCompare(y.fingerprint),
  );
  // New problems get a row (counts 0); then every touched issue moves by its delta. A removal-only
  // delta carries no times: infinity / -infinity leave first/last seen as they were.
  await tx`
    insert into issues (tenant_id, trace_service_id, fingerprint, detector, title, severity, first_seen_at, last_seen_at, occurrences, affected_sessions)
    select tenant_id, trace_service_id, fingerprint, detector, title, severity, first, last, 0, 0
    from jsonb_to_recordset(${tx.json(rows.filter((r) => r.detector) as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, fingerprint text,
      detector text, title text, severity text, first timestamptz, last timestamptz)
    order by trace_service_id, fingerprint
    on conflict (trace_service_id, fingerprint, tenant_id) do nothing`;
  const issues = await tx<{ id: string; trace_service_id: string; fingerprint: string }[]>`
    with x as (
      select * from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(trace_service_id uuid, fingerprint text, occ int, sessions int,
        title text, severity text, first timestamptz, last timestamptz)
    ), locked as (
      select i.id from issues i join x on i.trace_service_id = x.trace_service_id and i.fingerprint = x.fingerprint
      order by i.trace_service_id, i.fingerprint for update of i
    )
    update issues i set
      occurrences = greatest(i.occurrences + x.occ, 0),
      affected_sessions = greatest(i.affected_sessions + x.sessions, 0),
      first_seen_at = least(i.first_seen_at, coalesce(x.first, 'infinity')),
      last_seen_at = greatest(i.last_seen_at, coalesce(x.last, '-infinity')),
      title = coalesce(x.title, i.title),
      severity = coalesce(x.severity, i.severity)
    from x where i.id in (select id from locked) and i.trace_service_id = x.trace_service_id and i.fingerprint = x.fingerprint
    returning i.id, i.trace_service_id, i.fingerprint`;
  const issueOf = new Map(issues.map((r) => [`${r.trace_service_id}\u0000${r.fingerprint}`, r.id]));
  const findingRows = list.flatMap(({ row: s, findings }) =>
    findings.map((f) => ({
      tenant_id: s.tenant_id,
      trace_service_id: s.trace_service_id,
      session_pk: s.id,
      session_id: s.session_id,
      issue_id: issueOf.get(`${s.trace_service_id}\u0000${f.fingerprint}`),
      trace_id: f.traceId,
      span_id: f.spanId,
      detector: f.detector,
      fingerprint: f.fingerprint,
      severity: f.severity,
      title: f.title,
      evidence: f.evidence,
      occurred_at: f.occurredAt.toISOString(),
    })),
  );
  if (findingRows.length === 0) return;
  await tx`
    insert into findings (tenant_id, trace_service_id, session_pk, session_id, issue_id, trace_id, span_id, detector, fingerprint, severity, title, evidence, occurred_at)
    select tenant_id, trace_service_id, session_pk, session_id, issue_id, trace_id, span_id, detector, fingerprint, severity, title, evidence, occurred_at
    from jsonb_to_recordset(${tx.json(findingRows as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, session_pk uuid, session_id text,
      issue_id uuid, trace_id text, span_id text, detector text, fingerprint text, severity text, title text, evidence jsonb, occurred_at timestamptz)`;
}
