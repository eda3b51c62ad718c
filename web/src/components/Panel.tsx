import type { ComponentChildren } from "preact";
import type { LoadState } from "../ui";
import { ErrorBox, Loading } from "../ui";

/**
 * A titled part of a page (`section.panel`, named by its heading for screen readers): `headingId`
 * is the heading's id, which tests and links find the section by; `status` sits beside the
 * heading (`.panel-head`), e.g. a live status badge.
 */
export function Panel(p: {
  headingId: string;
  title: ComponentChildren;
  status?: ComponentChildren;
  class?: string;
  children?: ComponentChildren;
}) {
  const heading = <h2 id={p.headingId}>{p.title}</h2>;
  return (
    <section class={p.class ? `panel ${p.class}` : "panel"} aria-labelledby={p.headingId}>
      {p.status === undefined ? (
        heading
      ) : (
        <div class="panel-head">
          {heading}
          {p.status}
        </div>
      )}
      {p.children}
    </section>
  );
}

/**
 * A load's state where its data goes (useLoad): its error, and "Loading" until the first data;
 * `empty` once the data came and `isEmpty` says there is nothing to show.
 */
export function LoadStatus<T>(p: {
  load: Pick<LoadState<T>, "loading" | "error" | "data">;
  what?: string;
  isEmpty?: (data: T) => boolean;
  empty?: ComponentChildren;
}) {
  const { load } = p;
  return (
    <>
      <ErrorBox error={load.error} />
      {load.loading && load.data === undefined && <Loading what={p.what} />}
      {load.data !== undefined && p.isEmpty?.(load.data) && <p class="muted">{p.empty}</p>}
    </>
  );
}
