import { itemRowsSql } from "@cellar/shared/analysis/transcript-rows";
import { itemFromRow, type StoredItemRow } from "@cellar/shared/analysis/transcript-source";
import { jsonbText } from "@cellar/shared/db/jsonb-text";
import { decodePayload, inJsonbOrder } from "@cellar/shared/db/payload-codec";
import type postgres from "postgres";
import { prepared } from "../db.ts";
import { derivedSpanRows } from "../traces/spans.ts";
import { notFound } from "@cellar/shared/errors";
import { keepParts, keptParts } from "./payload-cache.ts";
import { loadSession, readiness } from "./row.ts";
import { cursorQuery, decodeCursor, encodeCursor, queryHash } from "../keyset.ts";
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

/**
 * A lean item: tool inputs and results longer than the preview are cut to a string preview with
 * their original length (characters, as Postgres counts them: code points) kept; reasoning and
 * raw span attributes are left to the item endpoint. `kind` is the row's.
 */
export function leanItem(item: Record<string, unknown>, kind: string): Record<string, unknown> {
  const out = { ...item };
  delete out.spanAttributes;
  delete out.reasoning;
  if (kind !== "tool_call" && kind !== "tool_result") return out;
  const content = item.content ?? null;
  const text = content === null ? null : typeof content === "string" ? content : jsonbText(content);
  const { length, preview } = codePoints(text ?? "", LEAN_PREVIEW_CHARS);
  out.content = length > LEAN_PREVIEW_CHARS ? preview : content;
  out.contentLength = length;
  out.contentTruncated = length > LEAN_PREVIEW_CHARS;
  return out;
}

/** Any UTF-16 surrogate: a text without one has as many code points as UTF-16 units. */
const SURROGATE = /[\ud800-\udfff]/;

/** Code points of a text (as Array.from counts them: a lone surrogate is one) and its first `max`. */
function codePoints(text: string, max: number): { length: number; preview: string } {
  if (!SURROGATE.test(text)) return { length: text.length, preview: text.slice(0, max) };
  const chars = Array.from(text);
  return { length: chars.length, preview: chars.slice(0, max).join("") };
}

/**
 * Transcript read: `processing` when nothing is materialized yet, `partial` when the session has
 * activity newer than the materialization, else `complete` (contract: Transcript readiness).
 * The page is one statement (its rows, and whether each trace they reference exists), then one
 * for the payloads not kept (resolveItems);
 * items are printed as Postgres prints jsonb (shared/db/jsonb-text.ts), the text pages had when
 * items were stored in full, and spliced into the body.
 */
export async function readTranscript(
  sql: postgres.Sql | postgres.TransactionSql,
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
    // A cursor seeks by position on the primary key instead of skipping `offset` rows. Either
    // stored shape (shared/analysis/transcript-rows.ts): runs, or the item rows written before.
    const cut = cursor
      ? itemRowsSql({ session: "$1", after: "$3::integer", limit: "$2" })
      : itemRowsSql({ session: "$1", limit: "$2", offset: "$3" });
    // Every trace the page references comes with its first row, saying whether it still exists;
    // the payloads of those whose parts this process has not kept (payload-cache.ts) come after,
    // in one statement (resolveItems).
    const rows = await cursorQuery(Boolean(cursor), () =>
      prepared<StoredRow & CarriedTrace>(
        sql,
        `with page as (${cut}),
           refs as (select source_trace_pk as pk, min(position) as first from page where source is not null group by source_trace_pk)
         select page.*, r.pk as ref_pk, tr.id as carried_pk, tr.tenant_id as carried_tenant
         from page left join refs r on r.first = page.position left join traces tr on tr.id = r.pk
         order by page.position`,
        [s.pk, q.limit, cursor ? cursor.k[0] : q.offset],
      ),
    );
    const full = await resolveItems(sql, rows, q.content === "lean");
    items = full.map((item, i) => jsonbText(q.content === "lean" ? leanItem(item, rows[i].kind) : item)).join(",");
    returned = rows.length;
    last = rows.length ? String(rows[rows.length - 1].position) : null;
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

type StoredRow = StoredItemRow & { position: number; source_trace_pk: string | null };
/**
 * A page row that is the first to reference a trace says whether that trace still exists
 * (`carried_pk`, with its tenant).
 */
type CarriedTrace = {
  ref_pk?: string | null;
  carried_pk?: string | null;
  carried_tenant?: string | null;
};

/** Stored payloads of the older uncompressed form fetched at a time (the bound on a read's memory). */
const PAYLOADS_AT_ONCE = 8;

/**
 * The full items of a page: rows that reference a payload get their sourced fields from it.
 * A lean read takes the parts of a payload an earlier read kept (payload-cache.ts) when the
 * page's statement found its trace. The other traces' payloads come in one statement, the
 * deflated form of all of them (about 1 KB each: a page references at most `limit` traces),
 * each decoded in turn and dropped once its items are resolved; payloads of the older
 * uncompressed form come PAYLOADS_AT_ONCE at a time. A read holds the page's deflated payloads,
 * at most PAYLOADS_AT_ONCE uncompressed ones and one decoded payload beside the kept parts.
 * (Before, the page's statement carried the first 8 missing payloads, given the kept traces'
 * ids as a parameter of up to 1,000 uuids, and the others came 8 to a statement: 7 round trips
 * for a cold page of 50 traces.)
 */
async function resolveItems(
  sql: postgres.Sql | postgres.TransactionSql,
  rows: Array<StoredRow & CarriedTrace>,
  lean = false,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = new Array(rows.length);
  const byTrace = new Map<string, number[]>();
  rows.forEach((r, i) => {
    if (r.source_trace_pk && r.source && !("id" in r.item)) {
      const list = byTrace.get(r.source_trace_pk);
      if (list) list.push(i);
      else byTrace.set(r.source_trace_pk, [i]);
    } else out[i] = itemFromRow(r);
  });
  const resolve = (pk: string, payload: unknown) => {
    for (const i of byTrace.get(pk)!) out[i] = itemFromRow(rows[i], payload, lean);
    byTrace.delete(pk);
  };
  // Lean reads take kept parts of payloads (payload-cache.ts) and keep what they decode.
  const sourcesOf = (pk: string) => byTrace.get(pk)!.map((i) => rows[i].source!);
  const decode = (pk: string, row: { tenant_id: string; payload?: unknown; payload_z?: Uint8Array | null }) => {
    const payload = row.payload || row.payload_z ? decodePayload(row) : undefined;
    if (lean) keepParts(row.tenant_id, pk, payload, sourcesOf(pk));
    return payload;
  };
  for (const r of rows) {
    if (!r.ref_pk || !byTrace.has(r.ref_pk)) continue;
    // No trace row: retention or a deletion removed it (the sourced fields are null).
    if (!r.carried_pk) {
      resolve(r.ref_pk, undefined);
      continue;
    }
    const kept = lean ? keptParts(r.carried_tenant!, r.carried_pk, sourcesOf(r.carried_pk)) : undefined;
    if (kept) resolve(r.carried_pk, kept);
  }
  const pks = [...byTrace.keys()];
  if (!pks.length) return out;
  const stored = await storedPayloads(sql, pks);
  const uncompressed: string[] = [];
  for (const pk of pks) {
    const row = stored.get(pk);
    if (row?.uncompressed) uncompressed.push(pk);
    else resolve(pk, row ? decode(pk, row) : undefined);
  }
  for (let at = 0; at < uncompressed.length; at += PAYLOADS_AT_ONCE) {
    const payloads = await uncompressedPayloads(sql, uncompressed.slice(at, at + PAYLOADS_AT_ONCE));
    for (const pk of uncompressed.slice(at, at + PAYLOADS_AT_ONCE)) {
      const row = payloads.get(pk);
      resolve(pk, row ? decode(pk, row) : undefined);
    }
  }
  return out;
}

/**
 * Of some traces, by trace pk: the deflated payload, or whether the payload is stored in the
 * older uncompressed form (docs/performance.md) instead, which uncompressedPayloads reads.
 */
async function storedPayloads(sql: postgres.Sql | postgres.TransactionSql, pks: string[]) {
  const rows = await prepared<{ id: string; tenant_id: string; payload_z: Uint8Array | null; uncompressed: boolean }>(
    sql,
    `select tr.id, tr.tenant_id, z.payload_z, (z.payload_z is null and tr.payload is not null) as uncompressed
     from traces tr left join trace_payloads z on z.tenant_id = tr.tenant_id and z.trace_pk = tr.id
     where tr.id = any($1::uuid[])`,
    [pks as never],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** Payloads of the older uncompressed form (`traces.payload`), by trace pk. */
async function uncompressedPayloads(sql: postgres.Sql | postgres.TransactionSql, pks: string[]) {
  const rows = await prepared<{ id: string; tenant_id: string; payload: unknown }>(
    sql,
    "select tr.id, tr.tenant_id, tr.payload from traces tr where tr.id = any($1::uuid[])",
    [pks as never],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * One item in full. Reasoning and span attributes come from the item when the processor put them
 * there, else from the span and the trace payload (items written before those fields existed).
 */
export async function readTranscriptItem(
  sql: postgres.Sql | postgres.TransactionSql,
  serviceId: string,
  sessionId: string,
  itemId: string,
) {
  const s = await loadSession(sql, serviceId, sessionId);
  const [row] = await prepared<
    StoredRow & {
      trace_pk: string | null;
      attributes: Record<string, unknown> | null;
      payload: Record<string, any> | null;
      payload_z: Uint8Array | null;
    }
  >(
    sql,
    `select ti.position, ti.item_id, ti.kind, ti.role, ti.timestamp, ti.trace_id, ti.span_id, ti.item, ti.source_trace_pk, ti.source, tr.id as trace_pk, sp.attributes, tr.payload, (select z.payload_z from trace_payloads z where z.tenant_id = tr.tenant_id and z.trace_pk = tr.id) as payload_z
     from (${itemRowsSql({ session: "$2::uuid", itemId: "$3::text" })}) ti
     left join spans sp on sp.trace_service_id = $1 and sp.span_id = ti.span_id
     left join traces tr on tr.trace_service_id = $1 and tr.trace_id = ti.trace_id`,
    [serviceId, s.pk, itemId] as never[],
  );
  if (!row) throw notFound("no such transcript item");
  const payload = row.payload || row.payload_z ? decodePayload(row) : null;
  // A span stored before migration 0017, else the one the trace's payload derives (traces/spans.ts).
  if (!row.attributes && payload && row.span_id && row.trace_id) {
    const t = { id: "", trace_id: row.trace_id, session_id: s.session_id, payload };
    row.attributes = derivedSpanRows(t).find((sp) => sp.span_id === row.span_id)?.attributes ?? null;
  }
  // Keys in the order jsonb kept them when items were stored in full (the same answer).
  const item = inJsonbOrder(
    row.source_trace_pk && row.source_trace_pk !== row.trace_pk
      ? (await resolveItems(sql, [row]))[0]
      : itemFromRow(row, payload ?? undefined),
  ) as Record<string, any>;
  let reasoning: unknown = item.reasoning ?? null;
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
