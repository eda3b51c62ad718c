import type postgres from "postgres";
import { prepared } from "../http/db";
import { t } from "elysia";
import { Iso, Pagination, paginate } from "../http/schemas";
import { Event, EVENT_COLUMNS, eventOut, Span, SPAN_COLUMNS, spanOut, TRACE_COLUMNS, TraceSummary, traceSummaryOut } from "../resources";
import type { SessionRow } from "./lookup";

export interface Page {
  limit: number;
  offset: number;
}
interface Ctx {
  sql: postgres.Sql;
  serviceName: string;
  session: SessionRow;
}

/** Spans loaded for tree and graph reads; beyond it the response says `truncated`. */
export const SPAN_GRAPH_CAP = 5_000;

/** One page of a session's rows (fetching one extra row tells `hasMore` without a count). */
async function listPage<T>({ sql, serviceName, session }: Ctx, p: Page, query: string, map: (r: postgres.Row, serviceName: string) => T) {
  const rows = await prepared(sql, `${query} limit $2 offset $3`, [session.pk, p.limit + 1, p.offset]);
  const page = rows.slice(0, p.limit);
  return { sessionId: session.session_id, serviceName, items: page.map((r) => map(r, serviceName)), pagination: paginate(p.limit, p.offset, page.length, rows.length > p.limit, null) };
}

export const SessionTraces = t.Object({ sessionId: t.String(), serviceName: t.String(), traces: t.Array(TraceSummary), pagination: Pagination });
export async function sessionTraces(ctx: Ctx, p: Page) {
  const { items, ...rest } = await listPage(ctx, p, `select ${TRACE_COLUMNS} from traces tr left join trace_analyses ta on ta.trace_pk = tr.id
     where tr.session_pk = $1 order by tr.start_time, tr.trace_id`, traceSummaryOut);
  return { ...rest, traces: items };
}

export const SessionSpans = t.Object({ sessionId: t.String(), serviceName: t.String(), spans: t.Array(Span), pagination: Pagination });
export async function sessionSpans(ctx: Ctx, p: Page) {
  const { items, ...rest } = await listPage(ctx, p, `select ${SPAN_COLUMNS} from spans sp where sp.session_pk = $1 order by sp.start_time, sp.span_id`, spanOut);
  return { ...rest, spans: items };
}

export const SessionEvents = t.Object({ sessionId: t.String(), serviceName: t.String(), events: t.Array(Event), pagination: Pagination });
export async function sessionEvents(ctx: Ctx, p: Page) {
  const { items, ...rest } = await listPage(ctx, p, `select ${EVENT_COLUMNS} from events e where e.session_pk = $1 order by e.timestamp, e.id`, eventOut);
  return { ...rest, events: items };
}

async function loadSpans(sql: postgres.Sql, session: SessionRow) {
  const rows = await prepared(sql, `select ${SPAN_COLUMNS} from spans sp where sp.session_pk = $1 order by sp.start_time, sp.span_id limit $2`, [session.pk, SPAN_GRAPH_CAP + 1]);
  return { rows: rows.slice(0, SPAN_GRAPH_CAP), truncated: rows.length > SPAN_GRAPH_CAP };
}

/** A span with its children, depth-first in start order. Children are the same shape. */
export const SpanNode = t.Composite([Span, t.Object({ children: t.Array(t.Record(t.String(), t.Unknown()), { description: "SpanNode objects (recursive)" }) })]);
export const SessionTree = t.Object({ sessionId: t.String(), serviceName: t.String(), spanCount: t.Integer(), truncated: t.Boolean(), roots: t.Array(SpanNode) });

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

export const SessionGraph = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  truncated: t.Boolean(),
  nodes: t.Array(t.Object({ id: t.String(), label: t.String(), kind: t.String(), traceId: t.String(), startTime: Iso, endTime: Iso, durationMs: t.Number() })),
  edges: t.Array(t.Object({ source: t.String(), target: t.String(), kind: t.Union([t.Literal("child"), t.Literal("next")]) })),
});
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
  const nodes = spans.map((s) => ({ id: s.spanId, label: s.name, kind: s.kind, traceId: s.traceId, startTime: s.startTime, endTime: s.endTime, durationMs: s.durationMs }));
  return { sessionId: session.session_id, serviceName, truncated, nodes, edges };
}
