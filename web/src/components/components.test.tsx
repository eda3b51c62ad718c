import { describe, expect, test } from "bun:test";
import { render } from "preact-render-to-string";
import type { Me } from "../api";
import { Pager, type Pagination } from "../pager";
import { buttonColumn, column, DataTable } from "./DataTable";
import { Field, Options, Outcome, ServiceSelect } from "./form";
import { loadEnded, loadStarted, useLoad } from "../ui";
import { Facts } from "./Facts";
import { PageShell } from "./PageShell";
import { LoadStatus, Panel } from "./Panel";
import { type MoreState, moreEnded, moreStarted, readMore, useMore } from "./useMore";

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

describe("Panel and LoadStatus", () => {
  test("a panel is a section named by its heading; a status sits beside the heading", () => {
    expect(render(<Panel headingId="tldr-h" title="TL;DR" />)).toBe(
      '<section class="panel" aria-labelledby="tldr-h"><h2 id="tldr-h">TL;DR</h2></section>',
    );
    const html = render(
      <Panel headingId="t-h" title="Transcript" class="wide" status={<span>complete</span>}>
        <p>body</p>
      </Panel>,
    );
    expect(html).toBe(
      '<section class="panel wide" aria-labelledby="t-h"><div class="panel-head"><h2 id="t-h">Transcript</h2><span>complete</span></div><p>body</p></section>',
    );
  });

  test("a load's status: loading until the first data, its error as an alert, the empty line once empty data came", () => {
    const isEmpty = (d: string[]) => d.length === 0;
    const status = (load: { loading: boolean; error?: Error; data?: string[] }) =>
      render(<LoadStatus load={load} what="Loading scores" isEmpty={isEmpty} empty="No scores yet." />);
    expect(status({ loading: true })).toBe('<p class="muted" role="status" aria-live="polite">Loading scores…</p>');
    expect(status({ loading: false, error: new Error("503: try later") })).toBe(
      '<p class="error" role="alert">503: try later</p>',
    );
    expect(status({ loading: false, data: [] })).toBe('<p class="muted">No scores yet.</p>');
    expect(status({ loading: true, data: [] })).toBe('<p class="muted">No scores yet.</p>');
    expect(status({ loading: false, data: ["a"] })).toBe("");
  });
});

test("a table's footer rows come after its body", () => {
  const html = render(
    <DataTable
      columns={columns}
      rows={rows}
      rowKey={(r) => r.id}
      foot={
        <tr>
          <th scope="row">Total</th>
          <td class="n">15</td>
        </tr>
      }
    />,
  );
  expect(html).toContain('</tbody><tfoot><tr><th scope="row">Total</th><td class="n">15</td></tr></tfoot></table>');
  expect(render(<DataTable columns={columns} rows={[]} rowKey={(r) => r.id} foot={<tr />} />)).toBe("");
});

test("a page's crumbs come before its title", () => {
  const html = render(<PageShell crumbs={<a href="/sessions">Sessions</a>} title="Session s-1" />);
  expect(html).toBe('<p class="crumbs"><a href="/sessions">Sessions</a></p><h1 tabindex="-1">Session s-1</h1>');
  expect(render(<PageShell title="Sessions" />)).toBe('<h1 tabindex="-1">Sessions</h1>');
});

describe("the paging hook (useMore)", () => {
  const first = { rows: ["a", "b"], next: 2, loading: false };
  test("the next page is appended and its marker becomes the next; the last page ends the list", () => {
    const loading = moreStarted(first);
    expect(loading).toEqual({ rows: ["a", "b"], next: 2, loading: true });
    const second = moreEnded(loading, { rows: ["c", "d"], next: 4 });
    expect(second).toEqual({ rows: ["a", "b", "c", "d"], next: 4, loading: false });
    expect(moreEnded(moreStarted(second), { rows: ["e"], next: null })).toEqual({
      rows: ["a", "b", "c", "d", "e"],
      next: null,
      loading: false,
    });
  });

  test("a failed page keeps the rows and the marker, so asking again retries the same page", () => {
    expect(moreEnded(moreStarted(first))).toEqual(first);
  });

  test("reading more asks for the page at the marker, shows it loading, then appends it; a failure keeps the list", async () => {
    let state: MoreState<string, number> = { rows: ["a", "b"], next: 2, loading: false };
    const seen: boolean[] = [];
    const update = (change: (s: MoreState<string, number>) => MoreState<string, number>) => {
      state = change(state);
      seen.push(state.loading);
    };
    const asked: number[] = [];
    await readMore(state, async (at) => (asked.push(at), { rows: ["c"], next: 3 }), update);
    expect({ asked, seen, state }).toEqual({
      asked: [2],
      seen: [true, false],
      state: { rows: ["a", "b", "c"], next: 3, loading: false },
    });
    const failing = readMore(state, async () => Promise.reject(new Error("503")), update);
    await expect(failing).rejects.toThrow("503");
    expect(state).toEqual({ rows: ["a", "b", "c"], next: 3, loading: false });
    await readMore({ rows: ["z"], next: null, loading: false }, async () => ({ rows: ["never"], next: 9 }), update);
    expect(state.rows).toEqual(["a", "b", "c"]);
  });

  test("before its first page the list is empty and has no next page", () => {
    let seen: unknown;
    function Probe() {
      const more = useMore(async (_: number) => ({ rows: [], next: null }));
      seen = { rows: more.rows, next: more.next, loading: more.loading };
      return null;
    }
    render(<Probe />);
    expect(seen).toEqual({ rows: [], next: null, loading: false });
  });
});

test("a shown caption titles its table; a stacked row does not label the cell of a hidden header", () => {
  const html = render(
    <DataTable caption="Service bot" captionShown stacked columns={columns} rows={rows} rowKey={(r) => r.id} />,
  );
  expect(html).toContain('<table class="list stack"><caption>Service bot</caption>');
  expect(html).toContain('<td data-label="Name">first</td><td class="n" data-label="Count">3</td><td><button');
});

test("facts: each name and value a term and its description, in a row when inline, named by a label", () => {
  expect(render(<Facts inline of={[["Plan", "pro"]]} />)).toBe(
    '<dl class="metrics inline"><div><dt>Plan</dt><dd>pro</dd></div></dl>',
  );
  const html = render(
    <Facts
      label="Totals"
      of={[
        ["Sessions", 3],
        ["Cost", <b>$1</b>],
      ]}
    />,
  );
  expect(html).toBe(
    '<dl class="metrics" aria-label="Totals"><div><dt>Sessions</dt><dd>3</dd></div><div><dt>Cost</dt><dd><b>$1</b></dd></div></dl>',
  );
});
