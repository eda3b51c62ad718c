import type postgres from "postgres";
import type { Fragment, ReadDb } from "./db.ts";
import { badRequest } from "@cellar/shared/errors";
import { paginate } from "../http/schemas.ts";
import { analysisJoin, analysisSortedPage, countsOnAnalysis, type AnalysisTable } from "./analysis-path.ts";
import { denseMatchesPage, fewMatchesPage } from "./few-matches.ts";
import {
  compileFilters,
  compileSort,
  type FilterSet,
  type PagedQuery,
  resolveField,
  sortableField,
} from "./filters.ts";
import { inSnapshot } from "./snapshot.ts";
import { afterCursor, cursorAfter, cursorQuery, decodeCursor, keyColumns, queryHash } from "./keyset.ts";

type Sql = postgres.Sql;

/** What a search runs over: the field set, the selected columns, the table and its scope. */
export interface SearchSpec {
  set: FilterSet;
  columns: string;
  table: string;
  alias: string;
  scope: Fragment;
  analysis?: AnalysisTable;
  defaultSort: string;
  tiebreak: string;
}

/**
 * Runs a filtered, sorted, offset-paged search over `table alias` within `scope` (the tenant and
 * service condition). `analysis` is the left-joined analysis table: when no filter or sort reads
 * it, the page is cut on the base table first and joined after, so a deep offset walks index
 * entries instead of joining every skipped row; a sort on one of its fields, and a total whose
 * filters all read it, use its own indexes (./analysis-path.ts). The page fetches one row more
 * than asked so `hasMore` is known even when the count is skipped. `withPage` reads what the page's
 * rows need besides (a session's score rollups) in the same snapshot, answered as `extra`.
 */
export async function runFiltered<X = undefined>(
  sql: Sql,
  spec: SearchSpec,
  q: PagedQuery,
  withPage?: (db: ReadDb, page: postgres.Row[]) => Promise<X>,
) {
  const plan = planSearch(sql, spec, q);
  const readWithPage = async (db: ReadDb): Promise<[postgres.Row[], { n: number }[] | null, X | undefined]> => {
    const [rows, count] = await readSearch(db, sql, spec, q, plan);
    return [rows, count, withPage ? await withPage(db, rows.slice(0, q.limit)) : undefined];
  };
  // A read of several statements (a total beside the page, the analysis paths, what the page's
  // rows need besides) runs them in one snapshot, so they cannot disagree about rows committed
  // between them.
  const statements = !q.skipTotalCount || spec.analysis !== undefined || withPage !== undefined;
  const [rows, count, extra] = await cursorQuery(Boolean(plan.cursor), () =>
    statements ? inSnapshot(sql, readWithPage) : readWithPage(sql),
  );
  const page = rows.slice(0, q.limit);
  const pagination = paginate(q.limit, plan.offset, page.length, rows.length > q.limit, count ? count[0].n : null);
  const nextCursor =
    pagination.hasMore && plan.sortExpr && page.length > 0
      ? cursorAfter(page[page.length - 1], plan.hash, plan.offset + page.length, 2)
      : null;
  return { rows: page, pagination: { ...pagination, nextCursor }, extra };
}

type SearchPlan = ReturnType<typeof planSearch>;

/** The search compiled: its filters and order, the cursor's position, and the statements' parts. */
function planSearch(sql: Sql, spec: SearchSpec, q: PagedQuery) {
  const where = compileFilters(sql, spec.set, q.filters);
  const order = compileSort(sql, spec.set, q.sort, spec.defaultSort, spec.tiebreak);
  const sortField = q.sort?.field ?? spec.defaultSort;
  const direction: "asc" | "desc" = q.sort?.direction === "asc" ? "asc" : "desc";
  const used = [...(q.filters ?? []).map((f) => f.field), sortField];
  const needsJoin = used.some((f) => resolveField(spec.set, f, "").joined);
  const byAnalysis = (q.filters ?? []).map((f) => ({
    joined: Boolean(resolveField(spec.set, f.field, "").joined),
    operator: f.operator,
  }));
  // Keyset: the sort expression and the tiebreak of the page's last row make the next cursor.
  const sortSpec = sortableField(spec.set, sortField)!;
  const sortExpr = typeof sortSpec.expr === "string" ? sortSpec.expr : null;
  const hash = queryHash([spec.table, q.service ?? null, q.filters ?? [], sortField, direction]);
  if (q.cursor && q.offset > 0)
    throw badRequest("invalid offset: cannot be combined with cursor (the cursor carries its position)");
  if (q.cursor && !sortExpr) throw badRequest(`invalid cursor: sorting by ${sortField} pages by offset only`);
  const cursor = q.cursor ? decodeCursor(q.cursor, hash, 2) : null;
  const seek =
    cursor && sortExpr
      ? afterCursor(sql, sortExpr, spec.tiebreak, direction, Boolean(sortSpec.notNull), cursor)
      : sql`true`;
  const keys = sortExpr ? `, ${keyColumns([sortExpr, spec.tiebreak])}` : "";
  const baseTable = `${spec.table} ${spec.alias}`;
  const join = spec.analysis ? analysisJoin(sql, spec.analysis) : sql``;
  return {
    where,
    order,
    direction,
    needsJoin,
    byAnalysis,
    sortSpec,
    sortExpr,
    hash,
    cursor,
    offset: cursor ? cursor.o : q.offset,
    seek,
    baseTable,
    join,
    filtered: sql`${sql`${sql.unsafe(baseTable)}`} ${needsJoin ? join : sql``} where ${spec.scope} and ${where}`,
    limit: cursor ? sql`limit ${q.limit + 1}` : sql`limit ${q.limit + 1} offset ${q.offset}`,
    select: spec.columns + keys,
  };
}

/**
 * The page (one row more than asked) and, unless skipped, the total: a filter on the analysis
 * read in base order tries its dense case, then its few matches (./few-matches.ts); else both at once.
 */
async function readSearch(
  db: ReadDb,
  sql: Sql,
  spec: SearchSpec,
  q: PagedQuery,
  plan: SearchPlan,
): Promise<[postgres.Row[], { n: number }[] | null]> {
  const onAnalysis = spec.analysis && countsOnAnalysis(plan.byAnalysis) && !plan.sortSpec.joined;
  const dense =
    onAnalysis && q.skipTotalCount && (plan.cursor || q.offset === 0)
      ? await denseMatchesPage({
          sql: db,
          base: plan.baseTable,
          alias: spec.alias,
          scope: spec.scope,
          join: plan.join,
          where: plan.where,
          seek: plan.seek,
          select: plan.select,
          order: plan.order,
          want: q.limit + 1,
        })
      : null;
  if (dense) return [dense, null];
  const few =
    onAnalysis && spec.analysis
      ? await fewMatchesPage({
          sql: db,
          analysis: spec.analysis,
          base: plan.baseTable,
          scope: spec.scope,
          where: plan.where,
          seek: plan.seek,
          select: plan.select,
          order: plan.order,
          limit: plan.limit,
        })
      : null;
  if (few) return [few.rows, q.skipTotalCount ? null : [{ n: few.total }]];
  return Promise.all([
    pageQuery(db, sql, spec, q, plan),
    q.skipTotalCount ? Promise.resolve(null) : countQuery(db, sql, spec, plan),
  ]);
}

/** The page: on the analysis table's index for a sort on its field, else cut on the base table (joined after). */
function pageQuery(db: ReadDb, sql: Sql, spec: SearchSpec, q: PagedQuery, plan: SearchPlan) {
  const { sortExpr, select, order, limit, seek, filtered, join, direction, cursor } = plan;
  if (spec.analysis && plan.sortSpec.joined && sortExpr) {
    return analysisSortedPage({
      sql: db,
      analysis: spec.analysis,
      base: plan.baseTable,
      scope: spec.scope,
      where: plan.where,
      select,
      sortExpr,
      tiebreak: spec.tiebreak,
      direction,
      want: q.limit + 1,
      offset: q.offset,
      cursor,
      seek: (tiebreak, notNull) => afterCursor(sql, sortExpr, tiebreak, direction, notNull, cursor!),
    });
  }
  return plan.needsJoin || !spec.analysis
    ? db`select ${sql.unsafe(select)} from ${filtered} and ${seek} order by ${order} ${limit}`
    : db`select ${sql.unsafe(select)} from (select ${sql.unsafe(`${spec.alias}.*`)} from ${filtered} and ${seek} order by ${order} ${limit}) ${sql.unsafe(spec.alias)} ${join} order by ${order}`;
}

/** The total: on the analysis table when every filter reads it, else over the filtered base. */
function countQuery(db: ReadDb, sql: Sql, spec: SearchSpec, plan: SearchPlan) {
  const analysis = spec.analysis;
  return analysis && countsOnAnalysis(plan.byAnalysis)
    ? serialCount(
        db,
        (tx) =>
          tx<
            { n: number }[]
          >`select count(*)::int as n from ${sql.unsafe(analysis.table)} where ${analysis.scope} and ${plan.where}`,
      )
    : db<{ n: number }[]>`select count(*)::int as n from ${plan.filtered}`;
}

/**
 * A total counted on an analysis field's index, in one process. The planner turns a count of more
 * than ~130,000 index entries into a parallel index-only scan; on the small machines Cellar is
 * measured on that bought no latency and cost 2.5x the Postgres CPU (bench/e2e.ts at 3 million
 * traces: 65 ms per read against 27 for a serial count of 80% of the entries), the workers
 * started per request and taking turns on the same b-tree pages. Same rows counted either way.
 */
async function serialCount(
  db: ReadDb,
  count: (tx: ReadDb) => postgres.PendingQuery<{ n: number }[]>,
): Promise<{ n: number }[]> {
  // Within the read's snapshot (a total is always read beside its page): for the rest of the
  // transaction, which the page's statements queued before it are not (results are the same).
  if ("savepoint" in db) {
    await db`set local max_parallel_workers_per_gather = 0`;
    return count(db);
  }
  const [, rows] = await db.begin((tx) => [tx`set local max_parallel_workers_per_gather = 0`, count(tx)]);
  return rows;
}
