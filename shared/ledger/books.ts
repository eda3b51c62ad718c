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
   * Items counted dead-lettered twice: a dead letter stored again after the acknowledgement of
   * its first storing was lost (a NATS restart, a crash between the two). Only once INGEST itself
   * confirmed what was accepted (the recount); not a loss, so not an imbalance. (`stored` cannot
   * be counted twice: it is counted with the rows, in the write's transaction, docs/ledger.md.)
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
  // With accepted confirmed from INGEST, more settled than accepted can only be a dead letter
  // counted twice (stored is counted once, with its rows): set apart. It says nothing of trace
  // rows, so the row check stays exact: a row deleted behind the service's back is never hidden.
  const redelivered = opts.acceptedConfirmed && raw < 0 ? -raw : 0;
  const missing = raw + redelivered;
  const missingRows = books.storedTraces - books.traceRows;
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
