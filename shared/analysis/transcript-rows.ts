/**
 * A session's transcript item rows, read from either stored shape (migration 0040): the runs of
 * `transcript_runs` (one row per trace's consecutive items, written since) and the rows of
 * `transcript_items` (one per item, written before; a session's next maturation replaces them).
 * A session has rows of one shape only (its maturation replaces the older shape in its
 * transaction), so each branch pages on its own and one of them is empty. Every branch gives the
 * same columns with the same types: `item` as jsonb, `timestamp` as timestamptz, `source_trace_pk`
 * as uuid, so a read answers byte for byte what it answered from transcript_items.
 */

/** The columns a read of item rows gives, in this order. */
export const ITEM_ROW_COLUMNS =
  "position, item_id, kind, role, timestamp, trace_id, span_id, item, source_trace_pk, source";

/**
 * A run's element `e` as ITEM_ROW_COLUMNS: a JSON array of the item row's values in that order
 * (`[position, item_id, kind, role, timestamp, trace_id, span_id, item, source_trace_pk, source]`,
 * written by apps/processor/src/maturation/persist-transcript.ts).
 */
const RUN_ELEMENT_COLUMNS =
  "(e->>0)::int as position, e->>1 as item_id, e->>2 as kind, e->>3 as role, " +
  "(e->>4)::timestamptz as timestamp, e->>5 as trace_id, e->>6 as span_id, e->7 as item, " +
  "(e->>8)::uuid as source_trace_pk, e->>9 as source";

export interface ItemRowsQuery {
  /** SQL of the session's pk (a placeholder such as `$1`). */
  session: string;
  /** SQL of the tenant, when the read is by tenant too. */
  tenant?: string;
  /** SQL of a position: only items after it (a cursor's keyset). */
  after?: string;
  /** SQL of one item id. */
  itemId?: string;
  limit?: string;
  offset?: string;
}

/**
 * SQL of the session's item rows (ITEM_ROW_COLUMNS) in position order per branch, with the
 * query's bounds applied in each branch: wrap it and order by position for one ordered list.
 */
export function itemRowsSql(q: ItemRowsQuery): string {
  const limit = q.limit ? ` limit ${q.limit}` : "";
  const legacy = [
    `session_pk = ${q.session}`,
    q.tenant ? `tenant_id = ${q.tenant}` : "",
    q.after ? `position > ${q.after}` : "",
    q.itemId ? `item_id = ${q.itemId}` : "",
  ].filter(Boolean);
  const legacySql = `(select ${ITEM_ROW_COLUMNS} from transcript_items where ${legacy.join(" and ")} order by position${limit}${q.offset ? ` offset ${q.offset}` : ""})`;
  const session = [`r.session_pk = ${q.session}`, q.tenant ? `r.tenant_id = ${q.tenant}` : ""].filter(Boolean);
  const elements = `cross join lateral jsonb_array_elements(r.items) with ordinality as x(e, n)`;
  if (q.offset) {
    // An offset counts items, not positions (an id kept once leaves its position unused, and
    // retention cuts runs): runs before the page are skipped by the items they hold (item_ids),
    // without reading their items; only the page's runs are unnested, from the offset's item on.
    const counted = `select r.position, r.tenant_id, cardinality(r.item_ids) as n,
        coalesce(sum(cardinality(r.item_ids)) over (order by r.position rows between unbounded preceding and 1 preceding), 0) as before
      from transcript_runs r where ${session.join(" and ")}`;
    const page = `w.before + w.n > ${q.offset}${q.limit ? ` and w.before < ${q.offset} + ${q.limit}` : ""}`;
    return (
      `${legacySql} union all (select ${RUN_ELEMENT_COLUMNS} from (select * from (${counted}) w where ${page}) w` +
      ` join transcript_runs r on r.session_pk = ${q.session} and r.tenant_id = w.tenant_id and r.position = w.position ${elements}` +
      ` where w.before + x.n > ${q.offset} order by r.position, x.n${limit})`
    );
  }
  const runs = [
    ...session,
    // A run wholly before the cursor is skipped by its last position, before its items are read.
    q.after ? `r.last_position > ${q.after} and (e->>0)::int > ${q.after}` : "",
    q.itemId ? `${q.itemId} = any(r.item_ids) and e->>1 = ${q.itemId}` : "",
  ].filter(Boolean);
  return `${legacySql} union all (select ${RUN_ELEMENT_COLUMNS} from transcript_runs r ${elements} where ${runs.join(" and ")} order by r.position, x.n${limit})`;
}
