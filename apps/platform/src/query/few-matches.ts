import type postgres from "postgres";
import type { Fragment, ReadDb } from "./db.ts";
import type { AnalysisTable } from "./analysis-path.ts";

/** At most this many matches: the page is read from the matches instead of walking base rows. */
export const FEW_MATCHES = 1000;

/**
 * A search whose filters all read the analysis (`countsOnAnalysis`) and whose order is a base-row
 * field (the default, newest activity first) walks base rows in that order and probes each one's
 * analysis until the page is full: about limit / density rows, so a filter matching 0.25% of
 * 600,000 sessions walked tens of thousands of them (5-11 s on the 3 million trace cluster). The
 * matches are counted first, up to FEW_MATCHES + 1 (an index range where the field has an
 * index, ~0.2 us an entry): when there are that few, the page is read from them (the analysis
 * rows, joined to their base rows, sorted: at most FEW_MATCHES rows) and that count is the total.
 * Otherwise null, and the walk runs as before. Same rows either way: every filter needs an
 * analysis row, so the walk's left join keeps exactly this inner join's rows.
 */
export async function fewMatchesPage(p: {
  sql: ReadDb;
  analysis: AnalysisTable;
  /** `sessions s` */
  base: string;
  /** The base table's tenant and service condition. */
  scope: Fragment;
  where: Fragment;
  /** The cursor's condition on the base row (`true` without one). */
  seek: Fragment;
  select: string;
  order: Fragment;
  limit: Fragment;
}): Promise<{ rows: postgres.Row[]; total: number } | null> {
  const { sql, analysis: a } = p;
  const alias = sql.unsafe(a.table.trim().split(/\s+/)[1]);
  const table = sql.unsafe(a.table);
  const [{ n }] = await sql<{ n: number }[]>`
    select count(*)::int as n from (select 1 from ${table} where ${a.scope} and ${p.where} limit ${FEW_MATCHES + 1}) m`;
  if (n > FEW_MATCHES) return null;
  if (n === 0) return { rows: [], total: 0 };
  // `offset 0` keeps the matches a subquery of their own: read first, then joined.
  const rows = await sql`
    select ${sql.unsafe(p.select)}
    from (select ${alias}.* from ${table} where ${a.scope} and ${p.where} offset 0) ${alias}
    join ${sql.unsafe(p.base)} on ${sql.unsafe(a.on)}
    where ${p.scope} and ${p.seek} order by ${p.order} ${p.limit}`;
  return { rows, total: n };
}

/**
 * Base rows a page's first read walks: four times the page (a filter matching one row in four
 * fills it from them), at most FEW_MATCHES unless the page itself is longer, so a filter too rare
 * for it costs no more probes than the count it tried to spare.
 */
export const denseWalkRows = (want: number): number => Math.max(want, Math.min(want * 4, FEW_MATCHES));

/**
 * The same search's other case: a filter that matches most rows (metrics.totalTokens > 0 on
 * traces: every one). Counting its first FEW_MATCHES + 1 matches probes a thousand analysis rows,
 * each metric rebuilt from its trace row (~46 ms at 3 million traces), only to learn that the walk
 * is the way. So where no total is asked and the page starts at the top or at a cursor, the walk
 * runs first over the first `denseWalkRows(want)` base rows in the page's order: when that
 * fills the page (`want` rows), it is the walk's page (its first `want` matches in order lie among
 * those rows), else null and the search goes on as before (few matches, then the walk), having
 * spent at most that many probes.
 */
export async function denseMatchesPage(p: {
  sql: ReadDb;
  /** `traces tr` */
  base: string;
  alias: string;
  scope: Fragment;
  /** The left join of the analysis table. */
  join: Fragment;
  where: Fragment;
  seek: Fragment;
  select: string;
  order: Fragment;
  /** Rows the page reads (one more than asked). */
  want: number;
}): Promise<postgres.Row[] | null> {
  const { sql } = p;
  const alias = sql.unsafe(p.alias);
  // `offset 0` keeps the base rows a subquery of their own: cut first, then joined and filtered.
  const rows = await sql`
    select ${sql.unsafe(p.select)}
    from (select ${alias}.* from ${sql.unsafe(p.base)} where ${p.scope} and ${p.seek} order by ${p.order}
      limit ${denseWalkRows(p.want)} offset 0) ${alias} ${p.join}
    where ${p.where} order by ${p.order} limit ${p.want}`;
  return rows.length === p.want ? rows : null;
}
