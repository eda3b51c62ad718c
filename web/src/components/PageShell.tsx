import type { ComponentChildren } from "preact";
import { ErrorBox, Loading, PageTitle } from "../ui";

export interface PageShellProps {
  title: ComponentChildren;
  /** A sentence under the title: what the page is for. */
  lead?: ComponentChildren;
  /** The page's load (useLoad): its error is shown, and "Loading" until the first data. */
  load?: { loading: boolean; error?: Error; data?: unknown };
  /** What is loading ("Loading dead letters"). */
  loadingWhat?: string;
  children?: ComponentChildren;
}

/**
 * Every page's frame: the title (focused on navigation, ui.tsx PageTitle), the lead, the load's
 * error and progress, then the page. The content shows as soon as there is data, also while a
 * reload runs (the old data stays until the new arrives).
 */
export function PageShell(p: PageShellProps) {
  return (
    <>
      <PageTitle>{p.title}</PageTitle>
      {p.lead !== undefined && <p class="muted">{p.lead}</p>}
      <ErrorBox error={p.load?.error} />
      {p.load?.loading && p.load.data === undefined && <Loading what={p.loadingWhat} />}
      {p.children}
    </>
  );
}
