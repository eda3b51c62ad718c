import type postgres from "postgres";
import { notFound } from "../../../../shared/errors";

/** Characters of a heavy tool input/result kept in `content=lean` reads. */
export const LEAN_PREVIEW_CHARS = 500;

export interface TranscriptQuery {
  limit: number;
  offset: number;
  content: "lean" | "full";
}

/**
 * Transcript read: `processing` when nothing is materialized yet, `partial` when the session has
 * activity newer than the materialization, else `complete` (contract: Transcript readiness).
 */
export async function readTranscript(sql: postgres.Sql, serviceId: string, sessionId: string, q: TranscriptQuery, windowSeconds: number) {
  const [s] = await sql<{ id: string; activity_seq: number; last_ingested_at: Date; through_activity_seq: number | null; truncated: boolean | null; item_count: number | null; idle_seconds: number }[]>`
    select s.id, s.activity_seq, s.last_ingested_at, a.through_activity_seq, a.truncated, a.item_count,
      extract(epoch from now() - s.last_ingested_at)::float8 as idle_seconds
    from sessions s left join session_analyses a on a.session_pk = s.id
    where s.trace_service_id = ${serviceId} and s.session_id = ${sessionId}`;
  if (!s) throw notFound("no such session");
  // Until the window has passed since the last activity, maturation cannot have happened.
  const retryAfterSeconds = Math.max(1, Math.ceil(windowSeconds - s.idle_seconds) + 1);
  if (s.through_activity_seq === null) {
    return {
      status: "processing" as const, retryAfterSeconds, items: [], truncated: false,
      counts: { total: 0, returned: 0 }, pagination: { limit: q.limit, offset: q.offset, total: 0, hasMore: false, nextOffset: null },
    };
  }
  const status = Number(s.activity_seq) > Number(s.through_activity_seq) ? ("partial" as const) : ("complete" as const);
  const rows = await sql<{ item: Record<string, unknown> }[]>`
    select item from transcript_items where session_pk = ${s.id} order by position limit ${q.limit} offset ${q.offset}`;
  const items = rows.map((r) => (q.content === "lean" ? leanItem(r.item) : r.item));
  const total = s.item_count ?? 0;
  const nextOffset = q.offset + items.length < total ? q.offset + items.length : null;
  return {
    status,
    ...(status === "partial" ? { retryAfterSeconds } : {}),
    items,
    truncated: Boolean(s.truncated),
    counts: { total, returned: items.length },
    pagination: { limit: q.limit, offset: q.offset, total, hasMore: nextOffset !== null, nextOffset },
  };
}

/** Tool inputs and results longer than the preview are cut, with their original length kept. */
export function leanItem(item: Record<string, unknown>): Record<string, unknown> {
  if (item.type !== "tool_call" && item.type !== "tool_result") return item;
  const text = typeof item.content === "string" ? item.content : item.content == null ? null : JSON.stringify(item.content);
  if (text === null || text.length <= LEAN_PREVIEW_CHARS) return { ...item, contentLength: text?.length ?? 0, contentTruncated: false };
  return { ...item, content: text.slice(0, LEAN_PREVIEW_CHARS), contentLength: text.length, contentTruncated: true };
}
