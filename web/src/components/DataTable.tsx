import type { ComponentChildren, JSX } from "preact";

/** One column of a DataTable: its header, and the cell it makes of a row. */
export interface Column<T> {
  /** Stable key of the column (the header's text when it is one). */
  key: string;
  header: ComponentChildren;
  cell: (row: T) => ComponentChildren;
  /** A number: right-aligned header and cells (`class="n"`). */
  numeric?: boolean;
  /** The header is for screen readers only (an actions column); a stacked row does not label its cells. */
  hiddenHeader?: boolean;
  /** The cell's class (e.g. `url` for long text that may break anywhere). */
  cellClass?: string;
}

/** A column whose key is its header's text: `column("Name", (r) => r.name)`, options after. */
export function column<T>(
  header: string,
  cell: (row: T) => ComponentChildren,
  options: Omit<Column<T>, "key" | "header" | "cell"> = {},
): Column<T> {
  return { key: header, header, cell, ...options };
}

export interface DataTableProps<T> {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string | number;
  /** Names the table for screen readers: a caption (visually hidden unless `captionShown`) ... */
  caption?: ComponentChildren;
  /** The caption is shown as the table's title (several tables of one list, one per group). */
  captionShown?: boolean;
  /** ... or an aria-label. */
  label?: string;
  /** Denser rows. */
  compact?: boolean;
  /** On a narrow screen each row stacks its cells, each named by its column (`.stack`, `data-label`). */
  stacked?: boolean;
  /** The rows are being replaced (aria-busy). */
  busy?: boolean;
  /** Extra attributes of a row (data-* for tests and links). */
  rowProps?: (row: T) => JSX.HTMLAttributes<HTMLTableRowElement> & { [data: `data-${string}`]: string | number };
  /** The table's footer rows (`tfoot`): totals. */
  foot?: ComponentChildren;
  /** Shown instead of the table when there are no rows; nothing when left out. */
  empty?: ComponentChildren;
}

/**
 * The list table every page shows: `.table-wrap` (scrolls sideways on a narrow screen), column
 * headers with scope, numeric columns aligned, a visually hidden caption, and an empty state.
 */
export function DataTable<T>(p: DataTableProps<T>) {
  if (p.rows.length === 0) return p.empty === undefined ? null : <p class="muted">{p.empty}</p>;
  return (
    <div class="table-wrap">
      <table
        class={["list", p.compact && "compact", p.stacked && "stack"].filter(Boolean).join(" ")}
        aria-label={p.label}
        aria-busy={p.busy}
      >
        {p.caption !== undefined && <caption class={p.captionShown ? undefined : "sr-only"}>{p.caption}</caption>}
        <thead>
          <tr>
            {p.columns.map((c) => (
              <th key={c.key} scope="col" class={c.numeric ? "n" : undefined}>
                {c.hiddenHeader ? <span class="sr-only">{c.header}</span> : c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {p.rows.map((row) => (
            <tr key={p.rowKey(row)} {...(p.rowProps?.(row) ?? {})}>
              {p.columns.map((c) => (
                <td
                  key={c.key}
                  class={c.numeric ? "n" : c.cellClass}
                  data-label={p.stacked && !c.hiddenHeader && typeof c.header === "string" ? c.header : undefined}
                >
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
        {p.foot !== undefined && <tfoot>{p.foot}</tfoot>}
      </table>
    </div>
  );
}

/** What a row's button does: its text, its name for screen readers, and the action. */
export interface RowButton {
  text: string;
  label: string;
  onClick: () => void;
  danger?: boolean;
  disabled?: boolean;
}

/** The last column of a list: one small button per row, the column's header for screen readers only. */
export function buttonColumn<T>(button: (row: T) => RowButton): Column<T> {
  return {
    key: "Actions",
    header: "Actions",
    hiddenHeader: true,
    cell: (row) => {
      const b = button(row);
      return (
        <button
          type="button"
          class={b.danger ? "small danger" : "small"}
          disabled={b.disabled}
          aria-label={b.label}
          onClick={b.onClick}
        >
          {b.text}
        </button>
      );
    },
  };
}
