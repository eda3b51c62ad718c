import { useSearchParams } from "wouter-preact";

/**
 * Paging of the filtered-search lists (sessions, issues). "Next page" follows the API's
 * `pagination.nextCursor`, so page 2,000 costs what page 1 costs and there is no depth limit;
 * offsets (`?offset=`) stay for links and for "Previous page" while they are within the API's
 * offset limit (docs/platform-api.md). The cursor is kept in the URL (`?cursor=`) so a page can be
 * reloaded or shared; a cursor belongs to one query, so every filter, sort or service change drops
 * it (see `withoutPosition`).
 */

/** The API's deepest offset for filtered searches (docs/platform-api.md, "Limits"). */
export const MAX_OFFSET = 100_000;

export interface Pagination {
  offset: number;
  total: number | null;
  nextOffset: number | null;
  nextCursor?: string | null;
}

/** Where each cursor page was entered from, for "Previous page" past the offset limit (this tab only). */
const cameFrom = new Map<string, { cursor?: string; offset: number }>();

/** The URL parameters without the page position: for a new query (filters, sort, service). */
export function withoutPosition(p: URLSearchParams): URLSearchParams {
  const n = new URLSearchParams(p);
  n.delete("cursor");
  n.delete("offset");
  return n;
}

/** The request's position (`cursor` or `offset`) and the moves of a list page. */
export function usePaging(pageSize: number) {
  const [params, setParams] = useSearchParams();
  const cursor = params.get("cursor") || undefined;
  const offset = cursor ? 0 : Math.min(MAX_OFFSET, Math.max(0, Number(params.get("offset") ?? 0) || 0));
  const goTo = (to: { cursor?: string; offset: number }) =>
    setParams((p) => {
      const n = withoutPosition(p);
      if (to.cursor) n.set("cursor", to.cursor);
      else if (to.offset > 0) n.set("offset", String(to.offset));
      return n;
    });
  const back = (pg: Pagination) => {
    const entered = cursor ? cameFrom.get(cursor) : undefined;
    if (entered) return entered;
    const to = Math.max(0, pg.offset - pageSize);
    return to <= MAX_OFFSET ? { offset: to } : undefined;
  };
  return {
    /** Body fields of the filtered search for this page. */
    position: cursor ? { cursor } : { offset },
    /** True when the URL names a page other than the first. */
    deep: Boolean(cursor) || offset > 0,
    hasNext: (pg: Pagination) => Boolean(pg.nextCursor) || pg.nextOffset !== null,
    next: (pg: Pagination) => {
      if (pg.nextCursor) {
        cameFrom.set(pg.nextCursor, { cursor, offset: pg.offset });
        goTo({ cursor: pg.nextCursor, offset: pg.nextOffset ?? 0 });
      } else if (pg.nextOffset !== null) goTo({ offset: pg.nextOffset });
    },
    hasPrevious: (pg: Pagination) => pg.offset > 0 && back(pg) !== undefined,
    previous: (pg: Pagination) => {
      const to = back(pg);
      if (to) goTo(to);
    },
  };
}

/** Previous / "from–to of total" / Next, for a page of `count` rows. */
export function Pager({ pg, count, paging }: { pg: Pagination; count: number; paging: ReturnType<typeof usePaging> }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={!paging.hasPrevious(pg)} onClick={() => paging.previous(pg)}>
        Previous page
      </button>
      <span role="status">
        {pg.offset + 1}–{pg.offset + count}
        {pg.total !== null ? ` of ${pg.total}` : ""}
      </span>
      <button type="button" disabled={!paging.hasNext(pg)} onClick={() => paging.next(pg)}>
        Next page
      </button>
    </nav>
  );
}
