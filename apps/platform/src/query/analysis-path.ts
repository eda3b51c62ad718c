import type postgres from "postgres";
import type { Fragment, ReadDb } from "./db.ts";
import type { Cursor } from "./keyset.ts";

/**
 * Searches that sort or count on an analysis field (session rollups, `metrics.latency*`, trace
 * cost) served from the analysis table's own indexes (migration 0009: one b-tree per field on
 * `(trace_service_id, field, row id)`), with answers identical to the plain left-join query.
 *
 * Sort: the documented order is `field dir NULLS LAST, id dir`, where the field is null both for
 * rows without an analysis (left join) and for null values. No single index yields that order
 * across a left join, so the page is read in two parts: (A) analysed rows with a non-null value,
 * straight off the field's index joined to the base row, then, only when A runs out before the
 * page is full, (B) the rows whose value is null, by id. A cursor whose key is null starts in B.
 *
 * Count: when every filter reads the analysis and one of them cannot match a row without one
 * (anything but notEquals/notIn), the matches are exactly the analysis rows of the service that
 * pass the filters (an analysis row belongs to its session's service), so the total is counted
 * on the analysis table alone: an index range for a range on an indexed field.
 */
export interface AnalysisTable {
  /** `session_analyses a`: the table and its alias. */
  table: string;
  /** Join condition to the base row, e.g. `a.session_pk = s.id`. */
  on: string;
  /** The base row id as the analysis row holds it (`a.session_pk`): the order's tiebreak in part A. */
  pk: string;
  /** The analysis rows of the searched service (`a.trace_service_id = ...`). */
  scope: Fragment;
}

export interface AnalysisPageArgs {
  sql: ReadDb;
  analysis: AnalysisTable;
  /** `sessions s` */
  base: string;
  /** The base table's tenant and service condition. */
  scope: Fragment;
  where: Fragment;
  select: string;
  sortExpr: string;
  tiebreak: string;
  direction: "asc" | "desc";
  /** Rows wanted (the page plus one to know `hasMore`). */
  want: number;
  offset: number;
  cursor: Cursor | null;
  /** afterCursor bound to the sort key (with the given tiebreak and null-ness). */
  seek: (tiebreak: string, notNull: boolean) => Fragment;
}

/** The left join of the plain query, restricted to the service's analysis rows (same rows: see above). */
export const analysisJoin = (sql: ReadDb, a: AnalysisTable) =>
  sql`left join ${sql.unsafe(a.table)} on ${sql.unsafe(a.on)} and ${a.scope}`;

/** Rows of one page ordered `sortExpr dir nulls last, tiebreak dir`, read as part A then part B. */
export async function analysisSortedPage(p: AnalysisPageArgs): Promise<postgres.Row[]> {
  const { sql, analysis: a } = p;
  const dir = sql.unsafe(p.direction);
  const s = sql.unsafe(p.sortExpr);
  const partA = (extra: Fragment, limit: number, offset: number) => sql`
    select ${sql.unsafe(p.select)} from ${sql.unsafe(a.table)} join ${sql.unsafe(p.base)} on ${sql.unsafe(a.on)}
    where ${a.scope} and ${p.scope} and ${s} is not null and ${p.where} and ${extra}
    order by ${s} ${dir}, ${sql.unsafe(a.pk)} ${dir} limit ${limit} offset ${offset}`;
  const partB = (extra: Fragment, limit: number, offset: number) => sql`
    select ${sql.unsafe(p.select)} from ${sql.unsafe(p.base)} ${analysisJoin(sql, a)}
    where ${p.scope} and ${s} is null and ${p.where} and ${extra}
    order by ${sql.unsafe(p.tiebreak)} ${dir} limit ${limit} offset ${offset}`;

  if (p.cursor) {
    // A null key: the walk is already among the null values (part B), past the cursor's id.
    if (p.cursor.k[0] === null) return partB(p.seek(p.tiebreak, false), p.want, 0);
    const rowsA = await partA(p.seek(a.pk, true), p.want, 0);
    if (rowsA.length >= p.want) return rowsA;
    return [...rowsA, ...(await partB(sql`true`, p.want - rowsA.length, 0))];
  }
  const rowsA = await partA(sql`true`, p.want, p.offset);
  if (rowsA.length >= p.want) return rowsA;
  // Where part B starts: right after A's last row, or, for an offset past all of A, after the
  // rows of A it skips (counted only then).
  let offsetB = 0;
  if (rowsA.length === 0 && p.offset > 0) {
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from ${sql.unsafe(a.table)} join ${sql.unsafe(p.base)} on ${sql.unsafe(a.on)}
      where ${a.scope} and ${p.scope} and ${s} is not null and ${p.where}`;
    offsetB = Math.max(0, p.offset - n);
  }
  return [...rowsA, ...(await partB(sql`true`, p.want - rowsA.length, offsetB))];
}

/** Operators that match a row without an analysis (its fields are null): `is distinct from`, `not in`. */
const MATCHES_NULL = new Set(["notEquals", "notIn"]);

/** Whether the total can be counted on the analysis table alone (see the module comment). */
export function countsOnAnalysis(filters: Array<{ joined: boolean; operator: string }>): boolean {
  return filters.length > 0 && filters.every((f) => f.joined) && filters.some((f) => !MATCHES_NULL.has(f.operator));
}
