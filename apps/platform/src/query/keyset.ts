import { createHash } from "node:crypto";
import type postgres from "postgres";
import { badRequest } from "@cellar/shared/errors";

/**
 * Keyset ("cursor") paging beside offsets. An offset page makes Postgres walk every skipped row;
 * a cursor carries the sort key of the page's last row, so the next page seeks straight to it
 * through the same index. The cursor is opaque to clients (base64url JSON) and is tied to the
 * query it came from (a hash of the route, service, filters and sort), so replaying it against
 * another query is a 400 rather than a silently wrong page. It also carries the running offset,
 * so `pagination.offset` / `nextOffset` stay meaningful on cursor pages.
 *
 * A tampered cursor can only move the seek point inside the caller's own scope (the tenant and
 * service condition is always applied); a value Postgres cannot cast is a 400, never a 500.
 */

/** Postgres types a key may have; the cursor names one and it is spliced only after this check. */
const KEY_TYPES = new Set([
  "timestamp with time zone",
  "timestamp without time zone",
  "integer",
  "bigint",
  "smallint",
  "numeric",
  "double precision",
  "real",
  "text",
  "uuid",
  "character varying",
]);

/** A decoded cursor: the last row's sort value (null for a null sort value) and tiebreak, as text with their types. */
export interface Cursor {
  /** Hash of the query the cursor belongs to. */
  q: string;
  /** Offset of the row the cursor continues from (so pagination.offset stays honest). */
  o: number;
  /** Key values as Postgres text, in sort-key order. */
  k: Array<string | null>;
  /** Postgres type of each key. */
  t: string[];
}

export const CURSOR_MAX_CHARS = 2048;

export function queryHash(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 16);
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

/** The cursor of `raw` for the query hashed `q`; 400 naming `field` when malformed or foreign. */
export function decodeCursor(raw: string, q: string, keyCount: number, field = "cursor"): Cursor {
  let c: Cursor;
  try {
    c = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    throw badRequest(`invalid ${field}: not a cursor returned by this endpoint (pagination.nextCursor)`);
  }
  const ok =
    c &&
    typeof c === "object" &&
    typeof c.q === "string" &&
    Number.isInteger(c.o) &&
    c.o >= 0 &&
    Array.isArray(c.k) &&
    Array.isArray(c.t) &&
    c.k.length === keyCount &&
    c.t.length === keyCount &&
    c.k.every((v) => v === null || (typeof v === "string" && v.length <= 1000)) &&
    c.t.every((x) => typeof x === "string" && KEY_TYPES.has(x));
  if (!ok) throw badRequest(`invalid ${field}: not a cursor returned by this endpoint (pagination.nextCursor)`);
  if (c.q !== q)
    throw badRequest(`invalid ${field}: it belongs to a different query (same filters, sort and service are required)`);
  return c;
}

/** SQL select list that returns each key expression as text plus its type, for building the next cursor. */
export function keyColumns(exprs: string[]): string {
  return exprs.map((e, i) => `(${e})::text as "__key${i}", pg_typeof(${e})::text as "__keytype${i}"`).join(", ");
}

/** The cursor continuing after `row` (a row selected with keyColumns). */
export function cursorAfter(row: postgres.Row, q: string, nextOffset: number, keyCount: number): string {
  const k: Array<string | null> = [];
  const t: string[] = [];
  for (let i = 0; i < keyCount; i++) {
    k.push(row[`__key${i}`] ?? null);
    t.push(row[`__keytype${i}`]);
  }
  return encodeCursor({ q, o: nextOffset, k, t });
}

/**
 * The condition "after the cursor" for ORDER BY `sortExpr dir [nulls last], tiebreak dir`.
 * Written as `sort <= v and (sort < v or tb < id)` (desc) so the sort column's b-tree serves it
 * as an index bound; nulls sort last, so after a non-null value every null row still follows.
 */
export function afterCursor(
  sql: postgres.Sql,
  sortExpr: string,
  tiebreak: string,
  dir: "asc" | "desc",
  notNull: boolean,
  c: Cursor,
) {
  const [v, id] = c.k;
  const [vt, idt] = c.t;
  const s = sql.unsafe(sortExpr);
  const tb = sql.unsafe(tiebreak);
  // `::text` first: postgres.js would otherwise serialize a timestamp parameter through a JS Date,
  // dropping microseconds (the seek would skip rows) and throwing on a tampered value.
  const idVal = sql`${id}::text::${sql.unsafe(idt)}`;
  const strict = sql.unsafe(dir === "asc" ? ">" : "<");
  const loose = sql.unsafe(dir === "asc" ? ">=" : "<=");
  if (id === null) throw badRequest("invalid cursor: not a cursor returned by this endpoint (pagination.nextCursor)");
  if (v === null) return notNull ? sql`false` : sql`(${s} is null and ${tb} ${strict} ${idVal})`;
  const val = sql`${v}::text::${sql.unsafe(vt)}`;
  const seek = sql`(${s} ${loose} ${val} and (${s} ${strict} ${val} or ${tb} ${strict} ${idVal}))`;
  return notNull ? seek : sql`(${seek} or ${s} is null)`;
}

/**
 * Errors a tampered cursor can cause, as a 400: "data exception" (a value that does not cast) and
 * a key type swapped for another allowed one (`double precision <= uuid`: no such operator).
 */
const CURSOR_ERRORS = new Set(["42883", "42804", "42846"]);
export async function cursorQuery<T>(usedCursor: boolean, run: () => Promise<T>, field = "cursor"): Promise<T> {
  try {
    return await run();
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (usedCursor && typeof code === "string" && (code.startsWith("22") || CURSOR_ERRORS.has(code)))
      throw badRequest(`invalid ${field}: not a cursor returned by this endpoint (pagination.nextCursor)`);
    throw e;
  }
}
