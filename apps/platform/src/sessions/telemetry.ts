import type postgres from "postgres";
import { prepared } from "../http/db.ts";
import { paginate } from "../http/schemas.ts";
import { EVENT_COLUMNS, eventOut, SPAN_COLUMNS, spanOut, TRACE_COLUMNS, traceSummaryOut } from "../traces/model.ts";
import type { SessionRow } from "./service.ts";
import { cursorAfter, cursorQuery, decodeCursor, keyColumns, queryHash } from "../http/keyset.ts";
import { badRequest } from "@cellar/shared/errors";

/** A session's raw telemetry: its traces, spans and events (keyset-paged), and its span tree and graph. */

export interface Page {
  limit: number;
  offset: number;
  /** pagination.nextCursor of a previous page (keyset paging). */
  cursor?: string;
}

interface Ctx {
  sql: postgres.Sql;
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
async function listPage<T>(
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

export async function sessionSpans(ctx: Ctx, p: Page) {
  const { items, ...rest } = await listPage(
    ctx,
    p,
    {
      name: "session-spans",
      select: SPAN_COLUMNS,
      from: "from spans sp where sp.session_pk = $1",
      keys: ["sp.start_time", "sp.span_id"],
    },
    spanOut,
  );
  return { ...rest, spans: items };
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

async function loadSpans(sql: postgres.Sql, session: SessionRow) {
  const rows = await prepared(
    sql,
    `select ${SPAN_COLUMNS} from spans sp where sp.session_pk = $1 order by sp.start_time, sp.span_id limit $2`,
    [session.pk, SPAN_GRAPH_CAP + 1],
  );
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
