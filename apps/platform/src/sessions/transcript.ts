import type postgres from "postgres";
import { t } from "elysia";
import { notFound } from "../../../../shared/errors";
import { AnyJson, JsonObject, Nullable, Pagination } from "../http/schemas";
import { loadSession, readiness, ReadinessFields } from "./lookup";

/** Characters of a heavy tool input/result kept in `content=lean` reads. */
export const LEAN_PREVIEW_CHARS = 500;

export interface TranscriptQuery {
  limit: number;
  offset: number;
  content: "lean" | "full";
}

/** Items are documented in docs/analysis.md; only the fields every item has are pinned here. */
export const TranscriptItem = t.Object(
  {
    id: t.String(),
    type: t.Union(["system", "user", "assistant", "tool_call", "tool_result", "event"].map((v) => t.Literal(v))),
    role: Nullable(t.String()),
    timestamp: t.String({ format: "date-time" }),
    traceId: Nullable(t.String()),
    spanId: Nullable(t.String()),
    content: AnyJson,
    contentLength: t.Optional(t.Integer({ description: "lean reads of tool_call/tool_result: length of the full content" })),
    contentTruncated: t.Optional(t.Boolean()),
  },
  { additionalProperties: true },
);

export const TranscriptPage = t.Object({
  ...ReadinessFields,
  items: t.Array(TranscriptItem),
  truncated: t.Boolean(),
  counts: t.Object({ total: t.Integer(), returned: t.Integer() }),
  pagination: Pagination,
});

export const TranscriptItemDetail = t.Object({
  sessionId: t.String(),
  position: t.Integer(),
  item: TranscriptItem,
  reasoning: Nullable(t.String()),
  spanAttributes: Nullable(JsonObject),
});

/**
 * Transcript read: `processing` when nothing is materialized yet, `partial` when the session has
 * activity newer than the materialization, else `complete` (contract: Transcript readiness).
 */
export async function readTranscript(sql: postgres.Sql, serviceId: string, sessionId: string, q: TranscriptQuery, windowSeconds: number) {
  const s = await loadSession(sql, serviceId, sessionId);
  const ready = readiness(s, windowSeconds);
  if (ready.status === "processing") {
    return {
      ...ready, items: [], truncated: false,
      counts: { total: 0, returned: 0 }, pagination: { limit: q.limit, offset: q.offset, total: 0, hasMore: false, nextOffset: null },
    };
  }
  const rows = await sql<{ item: Record<string, unknown> }[]>`
    select item from transcript_items where session_pk = ${s.pk} order by position limit ${q.limit} offset ${q.offset}`;
  const items = rows.map((r) => (q.content === "lean" ? leanItem(r.item) : r.item));
  const total = s.item_count ?? 0;
  const nextOffset = q.offset + items.length < total ? q.offset + items.length : null;
  return {
    ...ready,
    items,
    truncated: Boolean(s.truncated),
    counts: { total, returned: items.length },
    pagination: { limit: q.limit, offset: q.offset, total, hasMore: nextOffset !== null, nextOffset },
  };
}

/**
 * Lean items: tool inputs and results longer than the preview are cut, with their original
 * length kept; reasoning and raw span attributes are left to the item endpoint.
 */
export function leanItem(item: Record<string, unknown>): Record<string, unknown> {
  const { spanAttributes: _a, reasoning: _r, ...rest } = item;
  if (item.type !== "tool_call" && item.type !== "tool_result") return rest;
  const text = typeof item.content === "string" ? item.content : item.content == null ? null : JSON.stringify(item.content);
  if (text === null || text.length <= LEAN_PREVIEW_CHARS) return { ...rest, contentLength: text?.length ?? 0, contentTruncated: false };
  return { ...rest, content: text.slice(0, LEAN_PREVIEW_CHARS), contentLength: text.length, contentTruncated: true };
}

/**
 * One item in full. Reasoning and span attributes come from the item when the processor put them
 * there, else from the span and the trace payload (items written before those fields existed).
 */
export async function readTranscriptItem(sql: postgres.Sql, serviceId: string, sessionId: string, itemId: string) {
  const s = await loadSession(sql, serviceId, sessionId);
  const [row] = await sql<{ position: number; item: Record<string, any>; attributes: Record<string, unknown> | null; payload: Record<string, any> | null }[]>`
    select ti.position, ti.item, sp.attributes, tr.payload
    from transcript_items ti
    left join spans sp on sp.trace_service_id = ${serviceId} and sp.span_id = ti.span_id
    left join traces tr on tr.trace_service_id = ${serviceId} and tr.trace_id = ti.trace_id
    where ti.session_pk = ${s.pk} and ti.item_id = ${itemId}`;
  if (!row) throw notFound("no such transcript item");
  const item = row.item;
  let reasoning: unknown = item.reasoning ?? null;
  if (reasoning == null && item.type === "assistant" && row.payload && row.attributes) {
    const index = Number(row.attributes["response.index"] ?? 0);
    const message = row.payload.responses?.[index]?.choices?.[0]?.message;
    reasoning = message?.reasoning_content ?? message?.reasoning ?? null;
  }
  return {
    sessionId: s.session_id,
    position: row.position,
    item,
    reasoning: typeof reasoning === "string" ? reasoning : reasoning == null ? null : JSON.stringify(reasoning),
    spanAttributes: (item.spanAttributes as Record<string, unknown> | undefined) ?? row.attributes ?? null,
  };
}
