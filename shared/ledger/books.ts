/**
 * The ledger's arithmetic (docs/ledger.md), pure: what balances and what does not. Every item
 * ingest accepted is, at any moment, stored, dead-lettered (until replayed) or still in flight:
 *   accepted = stored + dead_lettered - replayed + in_flight
 * Past the settled horizon (older than anything still waiting in INGEST) nothing is in flight,
 * so there the difference must be 0; and every stored trace has its row.
 */
export interface StageTotals {
  accepted: number;
  stored: number;
  deadLettered: number;
  replayed: number;
}

/** What is neither stored nor dead-lettered: in flight before the horizon, missing past it. */
export const unaccounted = (t: StageTotals) => t.accepted - t.stored - t.deadLettered + t.replayed;

export interface TenantBooks {
  tenantId: string;
  /** Settled minutes only. */
  settled: StageTotals;
  /** Traces counted stored in settled minutes, and trace rows received in them. */
  storedTraces: number;
  traceRows: number;
}

export interface Verdict {
  tenantId: string;
  balanced: boolean;
  /**
   * Items counted stored (or dead-lettered) twice: a batch written again after the
   * acknowledgement of its first write was lost (a NATS restart, a crash between the two). Only
   * once INGEST itself confirmed what was accepted (the recount); not a loss, so not an imbalance.
   */
  redelivered?: number;
  /** Items accepted that are neither stored nor dead-lettered though nothing is in flight (negative: counted stored more often than accepted). */
  unaccounted: number;
  /** Stored traces without their row (negative: rows the ledger never counted). */
  missingTraceRows: number;
  problems: string[];
}

export function judge(books: TenantBooks, opts: { acceptedConfirmed?: boolean } = {}): Verdict {
  const raw = unaccounted(books.settled);
  // With accepted confirmed from INGEST, more stored than accepted can only be counted twice
  // (each accepted item is written once): set apart, and taken off the row check, which the
  // same double count would otherwise trip ("stored traces have no row").
  const redelivered = opts.acceptedConfirmed && raw < 0 ? -raw : 0;
  const missing = raw + redelivered;
  const gap = books.storedTraces - books.traceRows;
  const missingRows = redelivered && gap > 0 ? Math.max(0, gap - redelivered) : gap;
  const problems: string[] = [];
  if (missing > 0)
    problems.push(`${missing} accepted items are neither stored nor dead-lettered, and none is in flight`);
  if (missing < 0) problems.push(`${-missing} more items stored or dead-lettered than ingest counted accepted`);
  if (missingRows > 0) problems.push(`${missingRows} stored traces have no row`);
  if (missingRows < 0) problems.push(`${-missingRows} trace rows the ledger never counted stored`);
  return {
    tenantId: books.tenantId,
    balanced: problems.length === 0,
    ...(redelivered ? { redelivered } : {}),
    unaccounted: missing,
    missingTraceRows: missingRows,
    problems,
  };
}
