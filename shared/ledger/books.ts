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
  /** Trace rows received before the ledger counted their service (rowCheck): not compared. */
  uncountedRows?: number;
}

export interface Verdict {
  tenantId: string;
  balanced: boolean;
  /**
   * Items counted twice: a duplicate copy delivered again (docs/ledger.md). Only once INGEST
   * itself confirmed what was accepted (the recount); not a loss, so not an imbalance. (`stored`
   * cannot be counted twice: it is counted with the rows, in the write's transaction; nor
   * `dead_lettered`: it is counted once per original message, docs/ledger.md.)
   */
  redelivered?: number;
  /** Items accepted that are neither stored nor dead-lettered though nothing is in flight (negative: counted stored more often than accepted). */
  unaccounted: number;
  /** Stored traces without their row (negative: rows the ledger never counted). */
  missingTraceRows: number;
  /** Trace rows received before the ledger counted their service: not compared (rowCheck). */
  uncountedRows?: number;
  problems: string[];
}

export function judge(books: TenantBooks, opts: { acceptedConfirmed?: boolean } = {}): Verdict {
  const raw = unaccounted(books.settled);
  // With accepted confirmed from INGEST, more settled than accepted can only be a duplicate copy
  // counted twice (stored is counted once, with its rows; a dead letter once per message): set
  // apart. It says nothing of trace rows, so the row check stays exact: a row deleted behind the
  // service's back is never hidden.
  // (An item of a message without a door, which no ingest counted, is counted accepted by the
  // processor that settles it: not an excess, docs/ledger.md.)
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
    ...(books.uncountedRows ? { uncountedRows: books.uncountedRows } : {}),
    unaccounted: missing,
    missingTraceRows: missingRows,
    problems,
  };
}

/** One service's minute in the window: traces the ledger counted stored, trace rows received, any count at all. */
export interface ServiceMinute {
  serviceName: string;
  minute: number;
  storedTraces: number;
  traceRows: number;
  /** The ledger has some count (any stage) of the service in this minute. */
  counted: boolean;
}

/**
 * The row check of one tenant (docs/ledger.md, "Rows the ledger never saw"): a trace row is
 * compared with the ledger's `stored` only from the first minute of the window in which the
 * ledger counted anything of its service. Rows before it were written by a release without the
 * ledger (an online upgrade), never counted by anyone; a service with no count in the window has
 * none compared. In that first minute a surplus of rows is the same older writer's (the upgrade
 * fell inside it) and is set apart; a shortfall is reported. Past it the check is exact both ways.
 */
export function rowCheck(minutes: ServiceMinute[]): { storedTraces: number; traceRows: number; uncounted: number } {
  const first = new Map<string, number>();
  for (const m of minutes)
    if (m.counted && (first.get(m.serviceName) ?? Number.POSITIVE_INFINITY) > m.minute)
      first.set(m.serviceName, m.minute);
  let storedTraces = 0;
  let traceRows = 0;
  let uncounted = 0;
  for (const m of minutes) {
    const start = first.get(m.serviceName);
    if (start === undefined || m.minute < start) {
      storedTraces += m.storedTraces;
      uncounted += m.traceRows;
      continue;
    }
    const surplus = m.minute === start ? Math.max(0, m.traceRows - m.storedTraces) : 0;
    storedTraces += m.storedTraces;
    traceRows += m.traceRows - surplus;
    uncounted += surplus;
  }
  return { storedTraces, traceRows, uncounted };
}
