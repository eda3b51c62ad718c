import type postgres from "postgres";
import type { IngestMessage } from "@cellar/shared/payloads";
import { minuteOf, UNRECORDED_DOOR } from "@cellar/shared/ledger/model";
import type { CountRow } from "@cellar/shared/ledger/upsert";

/**
 * What a write did with one item (docs/ledger.md, "Stored, counted with the rows"):
 * - `inserted`: this write inserted its row: counted `stored` under its kind;
 * - `duplicate`: its row was already there from another copy (the same item received again in
 *   another request, or twice in one request): counted `stored` under `duplicate`, so the item
 *   ingest accepted is accounted for, and kept out of the row check (it added no row);
 * - `again`: its row was written by this very copy before (a message delivered again after its
 *   acknowledgement was lost, or a processor killed between the commit and the ack): not counted,
 *   it was counted when the row was written.
 */
export type Settled = "inserted" | "duplicate" | "again";

/** The ledger's side of a write: count what it stored in its own transaction (WriteOptions.ledger). */
export interface LedgerWrite {
  /** Items of messages replayed from a dead letter (DL.replayOf): also counted `replayed` when stored. */
  replayed: ReadonlySet<IngestMessage>;
  /**
   * Items of messages without a door (`Cellar-Door`), not replays: put in INGEST by a publisher
   * that counted nothing (an ingest of a release before the ledger, during an online upgrade).
   * Also counted `accepted` under `unrecorded` when stored, so the books stay exact for them
   * (docs/ledger.md, "Rows the ledger never saw").
   */
  unrecorded?: ReadonlySet<IngestMessage>;
}

/** What a write counted, for the process's /metrics (the rows are already in ledger_counts). */
export type Counted = Array<{ stage: "stored" | "replayed" | "accepted"; reason: string; n: number }>;

/**
 * Each item's outcome, in order, from the natural keys the insert returned (`inserted`) and,
 * for the keys it did not, when the row already there was received (`rowReceivedMs`, epoch ms;
 * a row gone meanwhile reads as `again`). `sameCopy` says whether that row was written from this
 * item's copy (its kind knows: a trace's row keeps the copy's receivedAt, an event's its write time).
 */
export function settleItems(
  items: Array<{ key: string; receivedMs: number }>,
  inserted: ReadonlySet<string>,
  rowReceivedMs: ReadonlyMap<string, number>,
  sameCopy: (rowMs: number, itemMs: number) => boolean,
): Settled[] {
  const claimed = new Set<string>();
  return items.map(({ key, receivedMs }) => {
    if (inserted.has(key)) {
      if (claimed.has(key)) return "duplicate";
      claimed.add(key);
      return "inserted";
    }
    const rowMs = rowReceivedMs.get(key);
    return rowMs === undefined || sameCopy(rowMs, receivedMs) ? "again" : "duplicate";
  });
}

/**
 * Each item's outcome once the rows already there are known: when the write inserted every
 * item's row, at once (no statement, so the caller can pipeline the count after the write);
 * else after `lookup` read, for the items at `there` (indexes into `items`), when each row
 * already there was received (epoch ms by key; a row gone meanwhile is simply absent). Serves
 * every kind whose writer keeps a receipt time on its row (traces, events, scores).
 */
export function settleAfterLookup(
  items: Array<{ key: string; receivedMs: number }>,
  inserted: ReadonlySet<string>,
  sameCopy: (rowMs: number, itemMs: number) => boolean,
  lookup: (there: number[]) => Promise<ReadonlyMap<string, number>>,
): Settled[] | Promise<Settled[]> {
  const there = items.flatMap((item, i) => (inserted.has(item.key) ? [] : [i]));
  if (there.length === 0) return settleItems(items, inserted, new Map(), sameCopy);
  return lookup(there).then((found) => settleItems(items, inserted, found, sameCopy));
}

/** Where a kind's row keeps its natural key and the instant `sameCopy` compares (settleAfterLookup's lookup). */
export interface RowTimes {
  table: "traces" | "events" | "scores";
  /** The key column beside `trace_service_id` (and `tenant_id`). */
  key: "trace_id" | "event_key" | "idempotency_key";
  /** The row's receipt (or write) instant. */
  at: "received_at" | "ingested_at" | "created_at";
}

/**
 * When each row already there was received (epoch ms), keyed `<trace_service_id>\0<key>` like
 * the items; rows gone meanwhile are absent. One statement, by the table's unique key.
 */
export async function rowTimes(
  tx: postgres.TransactionSql,
  where: RowTimes,
  rows: Array<{ service: string; key: string; tenant: string }>,
): Promise<Map<string, number>> {
  const found = await tx<{ s: string; k: string; ms: string }[]>`
    select r.trace_service_id as s, r.${tx(where.key)} as k, (extract(epoch from r.${tx(where.at)}) * 1000)::bigint::text as ms
    from ${tx(where.table)} r
    join json_to_recordset(${tx.json(rows.map((r) => ({ s: r.service, k: r.key, tn: r.tenant })))}::json) as x(s uuid, k text, tn uuid)
      on r.trace_service_id = x.s and r.${tx(where.key)} = x.k and r.tenant_id = x.tn`;
  return new Map(found.map((r) => [`${r.s}\u0000${r.k}`, Number(r.ms)]));
}

/**
 * The ledger rows of a write's outcomes: `stored` per kind (or `duplicate`), `replayed`, and
 * `accepted`/`unrecorded` for an item no ingest counted, at each item's receivedAt minute.
 */
export function storedCounts(
  entries: Array<{ message: IngestMessage; settled: Settled }>,
  ledger: LedgerWrite,
): { rows: CountRow[]; counted: Counted } {
  const sums = new Map<string, CountRow>();
  const add = (m: IngestMessage, stage: Counted[number]["stage"], reason: string) => {
    const minute = new Date(minuteOf(Date.parse(m.receivedAt))).toISOString();
    const k = `${m.tenantId}\u0000${m.serviceName}\u0000${minute}\u0000${stage}\u0000${reason}`;
    const row = sums.get(k);
    if (row) row.count++;
    else sums.set(k, { tenant_id: m.tenantId, service_name: m.serviceName, minute, stage, reason, count: 1 });
  };
  for (const { message, settled } of entries) {
    if (settled === "again") continue;
    add(message, "stored", settled === "inserted" ? message.kind : "duplicate");
    if (ledger.replayed.has(message)) add(message, "replayed", "");
    else if (ledger.unrecorded?.has(message)) add(message, "accepted", UNRECORDED_DOOR);
  }
  const rows = [...sums.values()];
  return {
    rows,
    counted: rows.map((r) => ({ stage: r.stage as Counted[number]["stage"], reason: r.reason, n: r.count })),
  };
}
