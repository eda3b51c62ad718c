import type postgres from "postgres";
import { prepared } from "../db.ts";
import { paginate } from "../../http/schemas.ts";
import { EVENT_COLUMNS, eventOut, spanOut, TRACE_COLUMNS, traceSummaryOut } from "../../traces/model.ts";
import type { SpanRow } from "../traces/spans.ts";
import { type SpanPosition, walkSessionSpans } from "./span-walk.ts";
import type { SessionRow } from "./row.ts";
import { type Cursor, cursorAfter, cursorQuery, decodeCursor, encodeCursor, keyColumns, queryHash } from "../keyset.ts";
import { badRequest } from "@cellar/shared/errors";

/** A session's raw telemetry: its traces, spans and events (keyset-paged), and its span tree and graph. */

export interface Page {
  limit: number;
  offset: number;
  /** pagination.nextCursor of a previous page (keyset paging). */
  cursor?: string;
}

interface Ctx {
  sql: postgres.Sql | postgres.TransactionSql;
  serviceName: string;
  session: SessionRow;
}

/** Spans loaded for tree and graph reads; beyond it the response says `truncated`. */
export const SPAN_GRAPH_CAP = 5_000;

/**
 * One page of a session's rows in ascending `keys` order (fetching one extra row tells `hasMore`
 * without a count). `from` selects from the table with `$1` = the session pk. With a cursor the
 * page seeks past the last row's keys through the (session_pk, time) index instead of walking
 * `offset` rows; the first key is a bound (`>=`) so the index serves it.
 */
export async function listPage<T>(
  { sql, serviceName, session }: Ctx,
  p: Page,
  list: { name: string; select: string; from: string; keys: [string, string] },
  map: (r: postgres.Row, serviceName: string) => T,
) {
  const hash = queryHash([list.name, serviceName, session.session_id]);
  if (p.cursor && p.offset > 0)
    throw badRequest("invalid offset: cannot be combined with cursor (the cursor carries its position)");
  const cursor = p.cursor ? decodeCursor(p.cursor, hash, 2) : null;
  const [k0, k1] = list.keys;
  const select = `select ${list.select}, ${keyColumns(list.keys)} ${list.from}`;
  const order = `order by ${k0}, ${k1} limit $2`;
  const rows = await cursorQuery(Boolean(cursor), () =>
    cursor
      ? prepared(
          sql,
          `${select} and ${k0} >= $3::text::${cursor.t[0]} and (${k0} > $3::text::${cursor.t[0]} or ${k1} > $4::text::${cursor.t[1]}) ${order}`,
          [session.pk, p.limit + 1, cursor.k[0], cursor.k[1]],
        )
      : prepared(sql, `${select} ${order} offset $3`, [session.pk, p.limit + 1, p.offset]),
  );
  const page = rows.slice(0, p.limit);
  const offset = cursor ? cursor.o : p.offset;
  const pagination = paginate(p.limit, offset, page.length, rows.length > p.limit, null);
  const nextCursor = pagination.hasMore ? cursorAfter(page[page.length - 1], hash, offset + page.length, 2) : null;
  return {
    sessionId: session.session_id,
    serviceName,
    items: page.map((r) => map(r, serviceName)),
    pagination: { ...pagination, nextCursor },
  };
}

export async function sessionTraces(ctx: Ctx, p: Page) {
  const { items, ...rest } = await listPage(
    ctx,
    p,
    {
      name: "session-traces",
      select: TRACE_COLUMNS,
      from: "from traces tr left join trace_analyses ta on ta.trace_pk = tr.id where tr.session_pk = $1",
      keys: ["tr.start_time", "tr.trace_id"],
    },
    traceSummaryOut,
  );
  return { ...rest, traces: items };
}

/**
 * A page of the session's spans in span order (start time, then span id), by offset or by the
 * cursor of the page before; the cursor is the one a page of stored span rows carried (the last
 * span's start as Postgres text and its id), so pages answer as they did before migration 0017.
 */
export async function sessionSpans({ sql, serviceName, session }: Ctx, p: Page) {
  const hash = queryHash(["session-spans", serviceName, session.session_id]);
  if (p.cursor && p.offset > 0)
    throw badRequest("invalid offset: cannot be combined with cursor (the cursor carries its position)");
  const cursor = p.cursor ? decodeCursor(p.cursor, hash, 2) : null;
  let after: SpanPosition | null = null;
  let rows: SpanRow[] = [];
  if (cursor) after = await cursorPosition(sql, cursor);
  else if (p.offset > 0) {
    const skipped = await walkSessionSpans(sql, session.pk, null, p.offset, true);
    const last = skipped[skipped.length - 1];
    after = skipped.length === p.offset ? { ms: last.start_ms, id: last.span_id } : null;
  }
  if (!cursor && p.offset > 0 && !after) rows = [];
  else rows = await walkSessionSpans(sql, session.pk, after, p.limit + 1);
  const page = rows.slice(0, p.limit);
  const offset = cursor ? cursor.o : p.offset;
  const pagination = paginate(p.limit, offset, page.length, rows.length > p.limit, null);
  const last = page[page.length - 1];
  const nextCursor = pagination.hasMore
    ? encodeCursor({
        q: hash,
        o: offset + page.length,
        k: [await startText(sql, last), last.span_id],
        t: ["timestamp with time zone", "text"],
      })
    : null;
  return {
    sessionId: session.session_id,
    serviceName,
    spans: page.map((r) => spanOut(r, serviceName)),
    pagination: { ...pagination, nextCursor },
  };
}

/** Where a session-spans cursor points (400 for one no page of this read gave). */
async function cursorPosition(sql: postgres.Sql | postgres.TransactionSql, c: Cursor): Promise<SpanPosition> {
  const [k0, k1] = c.k;
  if (k0 === null || k1 === null || c.t[0] !== "timestamp with time zone" || c.t[1] !== "text")
    throw badRequest("invalid cursor: not a cursor returned by this endpoint (pagination.nextCursor)");
  const [r] = await cursorQuery(true, () =>
    prepared<{ ms: number }>(sql, "select (extract(epoch from $1::text::timestamptz) * 1000)::float8 as ms", [k0]),
  );
  return { ms: r.ms, id: k1 };
}

/** A span's start as Postgres writes it (the cursor's key): a stored row's own text, else cast. */
async function startText(sql: postgres.Sql | postgres.TransactionSql, r: SpanRow): Promise<string> {
  if (typeof r.start_text === "string") return r.start_text;
  const [t] = await prepared<{ text: string }>(
    sql,
    "select (timestamptz 'epoch' + $1::float8 * interval '1 millisecond')::text as text",
    [r.start_ms],
  );
  return t.text;
}

export async function sessionEvents(ctx: Ctx, p: Page) {
  const { items, ...rest } = await listPage(
    ctx,
    p,
    {
      name: "session-events",
      select: EVENT_COLUMNS,
      from: "from events e where e.session_pk = $1",
      keys: ["e.timestamp", "e.id"],
    },
    eventOut,
  );
  return { ...rest, events: items };
}

async function loadSpans(sql: postgres.Sql | postgres.TransactionSql, session: SessionRow) {
  const rows = await walkSessionSpans(sql, session.pk, null, SPAN_GRAPH_CAP + 1);
  return { rows: rows.slice(0, SPAN_GRAPH_CAP), truncated: rows.length > SPAN_GRAPH_CAP };
}

type Node = ReturnType<typeof spanOut> & { children: Node[] };
/** Spans nested under their parents; a span whose parent is missing is a root. */
export async function sessionTree({ sql, serviceName, session }: Ctx) {
  const { rows, truncated } = await loadSpans(sql, session);
  const nodes = new Map<string, Node>();
  for (const r of rows) nodes.set(r.span_id, { ...spanOut(r, serviceName), children: [] });
  const roots: Node[] = [];
  for (const n of nodes.values()) {
    const parent = n.parentSpanId ? nodes.get(n.parentSpanId) : undefined;
    (parent ? parent.children : roots).push(n);
  }
  return { sessionId: session.session_id, serviceName, spanCount: nodes.size, truncated, roots };
}

/**
 * Nodes are spans; `child` edges follow the parent links and `next` edges join consecutive root
 * spans in time, so a client can draw the session's flow as well as each call's hierarchy.
 */
export async function sessionGraph({ sql, serviceName, session }: Ctx) {
  const { rows, truncated } = await loadSpans(sql, session);
  const spans = rows.map((r) => spanOut(r, serviceName));
  const ids = new Set(spans.map((s) => s.spanId));
  const edges: Array<{ source: string; target: string; kind: "child" | "next" }> = [];
  let previousRoot: string | null = null;
  for (const s of spans) {
    if (s.parentSpanId && ids.has(s.parentSpanId)) {
      edges.push({ source: s.parentSpanId, target: s.spanId, kind: "child" });
    } else {
      if (previousRoot) edges.push({ source: previousRoot, target: s.spanId, kind: "next" });
      previousRoot = s.spanId;
    }
  }
  const nodes = spans.map((s) => ({
    id: s.spanId,
    label: s.name,
    kind: s.kind,
    traceId: s.traceId,
    startTime: s.startTime,
    endTime: s.endTime,
    durationMs: s.durationMs,
  }));
  return { sessionId: session.session_id, serviceName, truncated, nodes, edges };
}
