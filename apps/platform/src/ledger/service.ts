import type postgres from "postgres";
import { ACCEPTED_REASONS, REFUSAL_REASONS, SDK_DROP_REASONS } from "@cellar/shared/ledger/model";
import { unaccounted } from "@cellar/shared/ledger/books";
import { hasRole, type Principal } from "../auth/principal.ts";
import { LEDGER_WINDOWS, type LedgerWindow } from "./model.ts";
import { inSnapshot } from "../query/snapshot.ts";

type Figures = {
  sdkRequested: number;
  sdkDropped: Record<string, number>;
  accepted: Record<string, number>;
  refused: Record<string, number>;
  stored: number;
  deadLettered: number;
  replayed: number;
  inFlight: number;
  loss: number;
};

const zeros = (keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, 0]));
const empty = (): Figures => ({
  sdkRequested: 0,
  sdkDropped: zeros(SDK_DROP_REASONS),
  accepted: zeros(ACCEPTED_REASONS),
  refused: zeros(REFUSAL_REASONS),
  stored: 0,
  deadLettered: 0,
  replayed: 0,
  inFlight: 0,
  loss: 0,
});

function add(f: Figures, stage: string, reason: string, n: number): void {
  if (stage === "sdk_requested") f.sdkRequested += n;
  else if (stage === "sdk_dropped" && reason in f.sdkDropped) f.sdkDropped[reason] += n;
  else if (stage === "accepted" && reason in f.accepted) f.accepted[reason] += n;
  else if (stage === "refused") f.refused[reason in f.refused ? reason : "other"] += n;
  else if (stage === "stored") f.stored += n;
  else if (stage === "dead_lettered") f.deadLettered += n;
  else if (stage === "replayed") f.replayed += n;
}

function finish(f: Figures): Figures {
  const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  f.inFlight = unaccounted({
    accepted: sum(f.accepted),
    stored: f.stored,
    deadLettered: f.deadLettered,
    replayed: f.replayed,
  });
  f.loss = sum(f.sdkDropped) + sum(f.refused) + f.deadLettered - f.replayed;
  return f;
}

/**
 * The ledger of one service (or of every service the principal can see) over a window, from
 * ledger_counts (one grouped read), with the tenant's latest reconciliation. Below admin, only
 * services of the principal's projects; the counts of no known service (a request refused
 * before its body named one) are an admin's.
 */
export async function readLedger(
  sql: postgres.Sql,
  p: Principal,
  opts: { service: string | null; window: LedgerWindow; now: Date },
) {
  const w = LEDGER_WINDOWS[opts.window];
  const stepMs = w.stepSeconds * 1000;
  const to = new Date(Math.floor(opts.now.getTime() / stepMs) * stepMs + stepMs);
  const from = new Date(to.getTime() - w.seconds * 1000);
  // Counts and the latest check in one snapshot, so the books shown and the verdict beside them
  // agree (a check committed between two reads could judge counts the page does not show).
  const [rows, checks] = await inSnapshot(sql, (tx) => {
    const visible = hasRole(p, "admin")
      ? tx``
      : tx`and l.service_name in (select ts.name from trace_services ts where ts.tenant_id = ${p.tenantId}
        and exists (select 1 from project_memberships pm where pm.user_id = ${p.userId} and pm.project_id = ts.project_id))`;
    const service = opts.service === null ? tx`` : tx`and l.service_name = ${opts.service}`;
    return Promise.all([
      tx<{ bucket: Date; stage: string; reason: string; n: string }[]>`
      select date_bin(${`${w.stepSeconds} seconds`}::interval, l.minute, 'epoch'::timestamptz) as bucket, l.stage, l.reason, sum(l.count)::text as n
      from ledger_counts l
      where l.tenant_id = ${p.tenantId} and l.minute >= ${from} and l.minute < ${to} ${service} ${visible}
      group by 1, 2, 3`,
      tx<
        {
          checked_at: Date;
          balanced: boolean;
          unbalanced_since: Date | null;
          details: { from: string; to: string; problems: string[] };
        }[]
      >`
      select checked_at, balanced, unbalanced_since, details from ledger_checks where tenant_id = ${p.tenantId}`,
    ]);
  });
  const points = new Map<number, Figures>();
  for (let at = from.getTime(); at < to.getTime(); at += stepMs) points.set(at, empty());
  const totals = empty();
  for (const r of rows) {
    const n = Number(r.n);
    const point = points.get(new Date(r.bucket).getTime());
    if (point) add(point, r.stage, r.reason, n);
    add(totals, r.stage, r.reason, n);
  }
  const check = checks[0];
  return {
    window: opts.window,
    from: from.toISOString(),
    to: to.toISOString(),
    stepSeconds: w.stepSeconds,
    service: opts.service,
    totals: finish(totals),
    series: [...points].map(([at, f]) => ({ t: new Date(at).toISOString(), ...finish(f) })),
    reconciliation: check
      ? {
          checkedAt: check.checked_at.toISOString(),
          balanced: check.balanced,
          unbalancedSince: check.unbalanced_since?.toISOString() ?? null,
          from: check.details.from,
          to: check.details.to,
          problems: check.details.problems ?? [],
        }
      : null,
  };
}
