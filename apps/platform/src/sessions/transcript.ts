import { decodePayload } from "@cellar/shared/db/payload-codec";
import type postgres from "postgres";
import { prepared } from "../http/db.ts";
import { derivedSpanRows } from "../traces/spans.ts";
import { notFound } from "@cellar/shared/errors";
import { loadSession, readiness } from "./service.ts";
import { cursorQuery, decodeCursor, encodeCursor, queryHash } from "../http/keyset.ts";
import { badRequest } from "@cellar/shared/errors";

/** A session's transcript: paged conversation items and one item in full. */

/** Characters of a heavy tool input/result kept in `content=lean` reads. */
export const LEAN_PREVIEW_CHARS = 500;

export interface TranscriptQuery {
  limit: number;
  offset: number;
  /** pagination.nextCursor of a previous page: seeks past that page's last position. */
  cursor?: string;
  content: "lean" | "full";
}

/** Content of an item as text (strings as they are, other JSON serialized), for lean previews. */
const CONTENT_TEXT = `case jsonb_typeof(ti.item -> 'content') when 'string' then ti.item ->> 'content' when 'null' then null else (ti.item -> 'content')::text end`;

/**
 * Lean items, computed in Postgres: tool inputs and results longer than the preview are cut to
 * a string preview with their original length (characters) kept; reasoning and raw span
 * attributes are left to the item endpoint.
 */
const LEAN_ITEM = `case when ti.kind in ('tool_call', 'tool_result') then
    (ti.item - 'spanAttributes' - 'reasoning') || jsonb_build_object(
      'content', case when length(c.text) > ${LEAN_PREVIEW_CHARS} then to_jsonb(left(c.text, ${LEAN_PREVIEW_CHARS})) else ti.item -> 'content' end,
      'contentLength', coalesce(length(c.text), 0),
      'contentTruncated', coalesce(length(c.text), 0) > ${LEAN_PREVIEW_CHARS})
  else ti.item - 'spanAttributes' - 'reasoning' end`;

/**
 * Transcript read: `processing` when nothing is materialized yet, `partial` when the session has
 * activity newer than the materialization, else `complete` (contract: Transcript readiness).
 * The page is serialized by Postgres and spliced into the body as text: items are stored as
 * JSON already, and parsing then re-serializing a 500-item page in JS dominated the latency.
 */
export async function readTranscript(
  sql: postgres.Sql,
  serviceId: string,
  sessionId: string,
  q: TranscriptQuery,
  windowSeconds: number,
): Promise<Response> {
  const hash = queryHash(["transcript", serviceId, sessionId]);
  if (q.cursor && q.offset > 0)
    throw badRequest("invalid offset: cannot be combined with cursor (the cursor carries its position)");
  const cursor = q.cursor ? decodeCursor(q.cursor, hash, 1) : null;
  const offset = cursor ? cursor.o : q.offset;
  const s = await loadSession(sql, serviceId, sessionId);
  const ready = readiness(s, windowSeconds);
  let items = "";
  let returned = 0;
  let last: string | null = null;
  if (ready.status !== "processing") {
    // The page is cut first, so the lean expression runs on `limit` rows, not offset + limit.
    // A cursor seeks by position on the primary key instead of skipping `offset` rows.
    const cut = cursor
      ? `select position, kind, item from transcript_items where session_pk = $1 and position > $3::integer order by position limit $2`
      : `select position, kind, item from transcript_items where session_pk = $1 order by position limit $2 offset $3`;
    const [page] = await cursorQuery(Boolean(cursor), () =>
      prepared<{ items: string | null; n: number; last: string | null }>(
        sql,
        `select string_agg((${q.content === "lean" ? LEAN_ITEM : "ti.item"})::text, ',' order by ti.position) as items, count(*)::int as n, max(ti.position)::text as last
       from (${cut}) ti
       cross join lateral (select ${CONTENT_TEXT} as text) c`,
        [s.pk, q.limit, cursor ? cursor.k[0] : q.offset],
      ),
    );
    items = page.items ?? "";
    returned = page.n;
    last = page.last;
  }
  const total = ready.status === "processing" ? 0 : (s.item_count ?? 0);
  const nextOffset = offset + returned < total ? offset + returned : null;
  const nextCursor =
    nextOffset !== null && last !== null ? encodeCursor({ q: hash, o: nextOffset, k: [last], t: ["integer"] }) : null;
  // docs/platform-api.md: every materialized read says which maturation it shows.
  const head = JSON.stringify({
    ...ready,
    maturationCount: Number(s.maturation_count),
    computedAt: s.computed_at ? new Date(s.computed_at).toISOString() : null,
  });
  const tail = JSON.stringify({
    truncated: ready.status !== "processing" && Boolean(s.truncated),
    counts: { total, returned },
    pagination: { limit: q.limit, offset, total, hasMore: nextOffset !== null, nextOffset, nextCursor },
  });
  return new Response(`${head.slice(0, -1)},"items":[${items}],${tail.slice(1)}`, {
    headers: { "content-type": "application/json" },
  });
}

/**
 * One item in full. Reasoning and span attributes come from the item when the processor put them
 * there, else from the span and the trace payload (items written before those fields existed).
 */
export async function readTranscriptItem(sql: postgres.Sql, serviceId: string, sessionId: string, itemId: string) {
  const s = await loadSession(sql, serviceId, sessionId);
  const [row] = await sql<
    {
      position: number;
      item: Record<string, any>;
      attributes: Record<string, unknown> | null;
      payload: Record<string, any> | null;
      payload_z: Uint8Array | null;
      span_id: string | null;
      trace_id: string | null;
    }[]
  >`
    select ti.position, ti.item, ti.span_id, ti.trace_id, sp.attributes, tr.payload, (select z.payload_z from trace_payloads z where z.tenant_id = tr.tenant_id and z.trace_pk = tr.id) as payload_z
    from transcript_items ti
    left join spans sp on sp.trace_service_id = ${serviceId} and sp.span_id = ti.span_id
    left join traces tr on tr.trace_service_id = ${serviceId} and tr.trace_id = ti.trace_id
    where ti.session_pk = ${s.pk} and ti.item_id = ${itemId}`;
  if (!row) throw notFound("no such transcript item");
  const item = row.item;
  let reasoning: unknown = item.reasoning ?? null;
  const payload = row.payload || row.payload_z ? decodePayload(row) : null;
  // A span stored before migration 0017, else the one the trace's payload derives (traces/spans.ts).
  if (!row.attributes && payload && row.span_id && row.trace_id) {
    const t = { id: "", trace_id: row.trace_id, session_id: s.session_id, payload };
    row.attributes = derivedSpanRows(t).find((sp) => sp.span_id === row.span_id)?.attributes ?? null;
  }
  if (reasoning == null && item.type === "assistant" && payload && row.attributes) {
    const index = Number(row.attributes["response.index"] ?? 0);
    const message = payload.responses?.[index]?.choices?.[0]?.message;
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
