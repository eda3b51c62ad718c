import { describe, expect, test } from "bun:test";
import { render } from "preact-render-to-string";
import type { Me } from "../api";
import { Pager, type Pagination } from "../pager";
import { buttonColumn, column, DataTable } from "./DataTable";
import { Field, Options, Outcome, ServiceSelect } from "./form";
import { loadEnded, loadStarted, useLoad } from "../ui";
import { PageShell } from "./PageShell";

type Row = { id: string; name: string; n: number };
const rows: Row[] = [
  { id: "a", name: "first", n: 3 },
  { id: "b", name: "second", n: 12 },
];
const columns = [
  { key: "Name", header: "Name", cell: (r: Row) => r.name },
  { key: "Count", header: "Count", numeric: true, cell: (r: Row) => r.n },
  {
    key: "Actions",
    header: "Actions",
    hiddenHeader: true,
    cell: (r: Row) => <button type="button">Open {r.id}</button>,
  },
];

describe("DataTable", () => {
  test("renders a scoped header per column, a row per item, numbers aligned, and a hidden caption", () => {
    const html = render(
      <DataTable caption="Things, newest first" columns={columns} rows={rows} rowKey={(r) => r.id} />,
    );
    expect(html).toContain('<div class="table-wrap"><table class="list">');
    expect(html).toContain('<caption class="sr-only">Things, newest first</caption>');
    expect(html).toContain('<th scope="col">Name</th><th scope="col" class="n">Count</th>');
    expect(html).toContain('<th scope="col"><span class="sr-only">Actions</span></th>');
    expect(html.match(/<tr>/g)?.length).toBe(3); // the header row and two rows
    expect(html).toContain('<td>second</td><td class="n">12</td><td><button type="button">Open b</button></td>');
  });

  test("shows the empty state instead of a table when there are no rows, and nothing without one", () => {
    const empty = render(<DataTable columns={columns} rows={[]} rowKey={(r) => r.id} empty="No things yet." />);
    expect(empty).toBe('<p class="muted">No things yet.</p>');
    expect(render(<DataTable columns={columns} rows={[]} rowKey={(r) => r.id} />)).toBe("");
  });

  test("a compact table named by a label, with attributes per row", () => {
    const html = render(
      <DataTable
        label="Attempts"
        compact
        columns={columns}
        rows={rows}
        rowKey={(r) => r.id}
        rowProps={(r) => ({ "data-row": r.id })}
      />,
    );
    expect(html).toContain('<table class="list compact" aria-label="Attempts">');
    expect(html).not.toContain("<caption");
    expect(html).toContain('<tr data-row="a">');
  });
});

test("a button column names each row's button for screen readers and hides its header", () => {
  const html = render(
    <DataTable
      columns={[
        buttonColumn((r: Row) => ({ text: "Delete", label: `Delete ${r.name}`, danger: true, onClick: () => {} })),
      ]}
      rows={rows.slice(0, 1)}
      rowKey={(r) => r.id}
    />,
  );
  expect(html).toContain('<th scope="col"><span class="sr-only">Actions</span></th>');
  expect(html).toContain('<button type="button" class="small danger" aria-label="Delete first">Delete</button>');
});

describe("DataTable stacked", () => {
  test("a stacked table names each cell by its column, and says when it is busy", () => {
    const html = render(
      <DataTable stacked busy columns={columns.slice(0, 2)} rows={rows.slice(0, 1)} rowKey={(r) => r.id} />,
    );
    expect(html).toContain('<table class="list stack" aria-busy="true">');
    expect(html).toContain('<td data-label="Name">first</td><td class="n" data-label="Count">3</td>');
  });
});

describe("column", () => {
  test("a column keyed by its header, its options kept", () => {
    const c = column("Count", (r: Row) => r.n, { numeric: true });
    expect(c.key).toBe("Count");
    expect(c.header).toBe("Count");
    expect(c.numeric).toBe(true);
    expect(c.cell(rows[1])).toBe(12);
    const html = render(
      <DataTable columns={[column("Name", (r: Row) => r.name), c]} rows={rows} rowKey={(r) => r.id} />,
    );
    expect(html).toContain('<td>first</td><td class="n">3</td>');
  });
});

describe("PageShell", () => {
  test("a loading page says so until its first data; the title and lead come first", () => {
    const html = render(
      <PageShell title="Things" lead="What things are." load={{ loading: true }} loadingWhat="Loading things">
        <p>content</p>
      </PageShell>,
    );
    expect(html).toMatch(/^<h1 tabindex="-1">Things<\/h1><p class="muted">What things are.<\/p>/);
    expect(html).toContain('<p class="muted" role="status" aria-live="polite">Loading things…</p>');
  });

  test("a reload keeps the data on screen without a loading line", () => {
    const html = render(
      <PageShell title="Things" load={{ loading: true, data: [] }}>
        <p>content</p>
      </PageShell>,
    );
    expect(html).not.toContain("Loading");
    expect(html).toContain("<p>content</p>");
  });

  test("a failed load is announced as an alert", () => {
    const html = render(
      <PageShell title="Things" load={{ loading: false, error: new Error("HTTP 503: try again") }} />,
    );
    expect(html).toContain('<p class="error" role="alert">HTTP 503: try again</p>');
    expect(html).not.toContain("Loading");
  });

  test("the head (filters, notices) comes under the lead and above the load's error and progress", () => {
    const html = render(
      <PageShell
        title="Things"
        lead="What things are."
        head={<p class="notice">Not enabled here.</p>}
        load={{ loading: true, error: new Error("HTTP 503") }}
      />,
    );
    const order = ["What things are.", "Not enabled here.", "HTTP 503", "Loading"].map((t) => html.indexOf(t));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
  });
});

describe("form parts", () => {
  test("Options: one option per [value, text] pair, in order", () => {
    const html = render(
      <select>
        <Options
          of={[
            ["1h", "Last hour"],
            ["24h", "Last day", "extra"],
          ]}
        />
      </select>,
    );
    expect(html).toBe('<select><option value="1h">Last hour</option><option value="24h">Last day</option></select>');
  });

  const me = {
    services: [
      { id: "s1", name: "support-bot" },
      { id: "s2", name: "sales-bot" },
    ],
  } as unknown as Me;

  test("a field is a label around its text and control; the service select lists the services by id", () => {
    const html = render(
      <Field label="Service" hint="Where events come from">
        <ServiceSelect me={me} />
      </Field>,
    );
    expect(html).toContain('<label class="field"><span>Service</span><select name="service" required>');
    expect(html).toContain('<option value="s1">support-bot</option><option value="s2">sales-bot</option>');
    expect(html).toContain('<small class="muted">Where events come from</small>');
  });

  test("an outcome is an alert for an error, a status for a notice, nothing otherwise", () => {
    expect(render(<Outcome error="not allowed" />)).toBe('<p class="error" role="alert">not allowed</p>');
    expect(render(<Outcome notice="2 replayed." />)).toBe('<p class="notice" role="status">2 replayed.</p>');
    expect(render(<Outcome error={null} notice={null} />)).toBe("");
  });
});

describe("paging", () => {
  const paging = (pg: { prev: boolean; next: boolean }) =>
    ({ hasPrevious: () => pg.prev, hasNext: () => pg.next, previous: () => {}, next: () => {} }) as never;

  test("the first page of a counted list: from-to of total, no previous page", () => {
    const pg: Pagination = { offset: 0, total: 120, nextOffset: 50, nextCursor: "c1" };
    const html = render(<Pager pg={pg} count={50} paging={paging({ prev: false, next: true })} />);
    expect(html).toContain('<span role="status">1–50 of 120</span>');
    expect(html).toContain('<button type="button" disabled>Previous page</button>');
    expect(html).toContain('<button type="button">Next page</button>');
  });

  test("a deep page of an uncounted list: no total, no next page at the end", () => {
    const pg: Pagination = { offset: 5000, total: null, nextOffset: null, nextCursor: null };
    const html = render(<Pager pg={pg} count={7} paging={paging({ prev: true, next: false })} />);
    expect(html).toContain('<span role="status">5001–5007</span>');
    expect(html).toContain('<button type="button">Previous page</button>');
    expect(html).toContain('<button type="button" disabled>Next page</button>');
  });
});

describe("the fetch hook (useLoad)", () => {
  test("a page renders loading before its first answer", () => {
    function Things() {
      const load = useLoad(async () => ["a"], []);
      return <PageShell title="Things" load={load} loadingWhat="Loading things" />;
    }
    expect(render(<Things />)).toContain("Loading things…");
  });

  test("a reload keeps the data and drops an old error; an answer replaces both", () => {
    expect(loadStarted({ data: [1], loading: false })).toEqual({ data: [1], loading: true });
    expect(loadStarted({ error: new Error("x"), loading: false })).toEqual({ data: undefined, loading: true });
    expect(loadEnded({ data: [2] })).toEqual({ data: [2], loading: false });
    const failed = loadEnded<number[]>({ error: new Error("HTTP 500") });
    expect(failed).toEqual({ error: new Error("HTTP 500"), loading: false });
    expect(failed.data).toBeUndefined();
  });
});
