import { useState } from "preact/hooks";

/** One page of a list read a page at a time: its rows and the next page's marker (null: the last). */
export interface MorePage<T, M> {
  rows: T[];
  next: M | null;
}

/** The rows shown so far, the next page's marker, and whether that page is loading. */
export interface MoreState<T, M> extends MorePage<T, M> {
  loading: boolean;
}

/** The next page is asked for: the rows stay. */
export const moreStarted = <T, M>(s: MoreState<T, M>): MoreState<T, M> => ({ ...s, loading: true });

/** The next page came (appended, its marker next), or failed (rows and marker kept: asking again retries). */
export const moreEnded = <T, M>(s: MoreState<T, M>, page?: MorePage<T, M>): MoreState<T, M> =>
  page ? { rows: s.rows.concat(page.rows), next: page.next, loading: false } : { ...s, loading: false };

/**
 * A list shown a page at a time with a "Show more" button (a transcript, a cost breakdown): the
 * rows so far, the next page's marker (an offset or a cursor), whether the next page is loading,
 * `reset` with a first page (read with the rest of the page), and `more` to append the next.
 */
export function useMore<T, M>(read: (next: M) => Promise<MorePage<T, M>>) {
  const [state, setState] = useState<MoreState<T, M>>({ rows: [], next: null, loading: false });
  const reset = (page: MorePage<T, M>) => setState({ ...page, loading: false });
  const more = () => readMore(state, read, setState);
  return { ...state, reset, more };
}

/**
 * Reads the page after `state` (nothing at the last page): marks it loading, then appends it, or
 * on a failure (thrown on) keeps the rows and the marker. `update` takes a state change.
 */
export async function readMore<T, M>(
  state: MoreState<T, M>,
  read: (next: M) => Promise<MorePage<T, M>>,
  update: (change: (s: MoreState<T, M>) => MoreState<T, M>) => void,
) {
  if (state.next === null) return;
  update(moreStarted);
  let page: MorePage<T, M> | undefined;
  try {
    page = await read(state.next);
  } finally {
    update((s) => moreEnded(s, page));
  }
}
