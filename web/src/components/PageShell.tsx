import type { ComponentChildren } from "preact";
import { PageTitle } from "../ui";
import { LoadStatus } from "./Panel";

export interface PageShellProps {
  /** Above the title: where the page sits (`p.crumbs`, links up). */
  crumbs?: ComponentChildren;
  title: ComponentChildren;
  /** A sentence under the title: what the page is for. */
  lead?: ComponentChildren;
  /** Under the title and lead, above the load's state: the page's filters, notices, a secret shown once. */
  head?: ComponentChildren;
  /** The page's load (useLoad): its error is shown, and "Loading" until the first data. */
  load?: { loading: boolean; error?: Error; data?: unknown };
  /** What is loading ("Loading dead letters"). */
  loadingWhat?: string;
  children?: ComponentChildren;
}

/**
 * Every page's frame: the crumbs, the title (focused on navigation, ui.tsx PageTitle), the lead, the head
 * (filters, notices), the load's error and progress, then the page. The content shows as soon as
 * there is data, also while a reload runs (the old data stays until the new arrives).
 */
export function PageShell(p: PageShellProps) {
  return (
    <>
      {p.crumbs !== undefined && <p class="crumbs">{p.crumbs}</p>}
      <PageTitle>{p.title}</PageTitle>
      {p.lead !== undefined && <p class="muted">{p.lead}</p>}
      {p.head}
      {p.load && <LoadStatus load={p.load} what={p.loadingWhat} />}
      {p.children}
    </>
  );
}
