import type postgres from "postgres";
import { fnv1a64 } from "@cellar/shared/analysis/fnv";
import { storedItem } from "@cellar/shared/analysis/transcript-source";
import { referenceOf, type TranscriptItem } from "../analysis/transcript.ts";
import type { SessionRow } from "./store.ts";

/**
 * A session's transcript written as runs (migration 0040, docs/analysis.md "Transcript runs"):
 * one `transcript_runs` row per trace's consecutive items instead of one `transcript_items` row
 * per item, about 4 per trace, each with two b-tree entries.
 */

/** A run is cut before its JSON passes this many bytes: it stays inline in its 8 KB page. */
export const RUN_BYTES = 4_000;
/** Rough JSON size of an insert's parameter: keeps one statement's parameter under a few MB. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Runs of several sessions written together: each time the buffer holds 500 runs or CHUNK_BYTES
 * (and once at the end), one statement keeps the unchanged runs of the re-matured sessions it
 * holds and deletes the others (with those sessions' item rows of the older shape), and one
 * multi-row insert writes the rest, instead of a statement per session (under load every
 * statement is a round trip of tens of ms: docs/performance.md, "Maturation throughput"). Memory
 * stays bounded by the same budget.
 */
export class TranscriptItemWriter {
  private sessions: Array<{ pk: string; runs: StoredRun[]; replace: boolean }> = [];
  private pending = new Set<string>();
  private runs = 0;
  private bytes = 0;
  constructor(private readonly tx: postgres.TransactionSql) {}

  /** A session's runs; `replace`: it was matured before, so its unchanged runs are kept. */
  async add(sessionPk: string, runs: StoredRun[], replace: boolean): Promise<void> {
    // A session twice in one buffer would be checked against its own runs not yet written.
    if (this.pending.has(sessionPk)) await this.flush();
    this.sessions.push({ pk: sessionPk, runs, replace });
    this.pending.add(sessionPk);
    for (const run of runs) {
      this.runs++;
      this.bytes += run.json.length;
    }
    if (this.runs >= 500 || this.bytes >= CHUNK_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    const sessions = this.sessions;
    if (!sessions.length) return;
    this.sessions = [];
    this.pending.clear();
    this.runs = 0;
    this.bytes = 0;
    const tx = this.tx;
    const replaced = sessions.filter((s) => s.replace);
    let kept = new Set<string>();
    if (replaced.length) {
      const keys = replaced.flatMap((s) =>
        s.runs.map((r) => ({ session_pk: s.pk, position: r.position, digest: r.digest })),
      );
      const pks = replaced.map((s) => s.pk);
      // Runs whose (position, digest) are unchanged stay as they are (no row version written);
      // the sessions' other runs and their item rows of the older shape go.
      const rows = await tx<{ session_pk: string; position: number }[]>`
        with x as (select * from json_to_recordset(${JSON.stringify(keys)}::text::json) as x(session_pk uuid, position int, digest int8)),
          legacy as (delete from transcript_items t where t.session_pk = any(${tx.array(pks)}::uuid[])),
          gone as (
            delete from transcript_runs t where t.session_pk = any(${tx.array(pks)}::uuid[])
              and not exists (select 1 from x where x.session_pk = t.session_pk and x.position = t.position and x.digest = t.digest))
        select t.session_pk, t.position from transcript_runs t
          join x on x.session_pk = t.session_pk and x.position = t.position and x.digest = t.digest
        where t.session_pk = any(${tx.array(pks)}::uuid[])`;
      kept = new Set(rows.map((r) => `${r.session_pk} ${r.position}`));
    }
    const fresh = sessions.flatMap((s) =>
      s.replace ? s.runs.filter((r) => !kept.has(`${s.pk} ${r.position}`)) : s.runs,
    );
    if (!fresh.length) return;
    // json, not jsonb, for the parameter: split into records once. No ON CONFLICT: a session's
    // runs are written only here, under its row lock, after its runs that changed were deleted;
    // a conflict would be a bug, and failing the maturation says so (recorded, retried, parked).
    await tx`
      insert into transcript_runs (session_pk, position, tenant_id, last_position, item_ids, items, digest)
      select session_pk, position, tenant_id, last_position, item_ids, items, digest
      from json_to_recordset(${`[${fresh.map((r) => r.json).join(",")}]`}::text::json) as x(session_pk uuid, position int, tenant_id uuid, last_position int,
        item_ids text[], items jsonb, digest int8)`;
  }
}

/**
 * Writes one session's transcript items as runs: each item's row holds what maturation computed
 * and, where its content is in a stored payload, a reference to it instead of a copy (docs/
 * analysis.md, "Items as references"). A re-maturation (`replace`) keeps the runs whose
 * (position, digest) are unchanged and writes only the others; the session's rows of the older
 * one-row-per-item shape go in the same statement (the online upgrade: they are read until then).
 * Called per session right after its analysis, so a chunk of sessions never holds more than one
 * session's items plus the shared `writer`'s bounded buffer in memory; without a `writer` the runs
 * are written before it returns.
 */
export async function persistTranscriptItems(
  tx: postgres.TransactionSql,
  s: SessionRow,
  items: TranscriptItem[],
  replace: boolean,
  writer?: TranscriptItemWriter,
  /** The items belong to a fold kept for the next maturation: remember their stored form. */
  remember = false,
): Promise<void> {
  const out = writer ?? new TranscriptItemWriter(tx);
  await out.add(s.id, storedRuns(s, items, remember), replace);
  if (!writer) await out.flush();
}

export interface StoredRun {
  /** The first item's position. */
  position: number;
  /** Of the run's items (their positions included): an unchanged run is not written again. */
  digest: string;
  /** The whole row as the insert reads it (a JSON object), serialised once with its digest. */
  json: string;
}

/**
 * A session's items as the runs they are stored in. One row per item id in a session (as the
 * unique index of migration 0024 held it for transcript_items): the first item with an id is
 * kept, a later one with the same id is left out (its position stays unused). A run is the
 * consecutive kept items of one trace, cut before RUN_BYTES of JSON: the same items always cut
 * the same way, so an unchanged prefix keeps its runs' digests.
 */
export function storedRuns(s: SessionRow, items: TranscriptItem[], remember = false): StoredRun[] {
  const runs: StoredRun[] = [];
  const ids = new Set<string>();
  const head = `{"session_pk":${JSON.stringify(s.id)},"tenant_id":${JSON.stringify(s.tenant_id)},`;
  let elements: string[] = [];
  let itemIds: string[] = [];
  let firstItem: TranscriptItem | null = null;
  let first = 0;
  let last = 0;
  let bytes = 0;
  let trace: string | null = null;
  const close = () => {
    if (!elements.length) return;
    // The same run of a continued fold's items as at its last maturation: serialised then.
    // A run's row is a function of the session, its positions and its elements: the same ones
    // (the cached strings compare by identity first) are the same row.
    const was = remember && firstItem ? storedRunOf.get(firstItem) : undefined;
    if (
      was &&
      was.session === s.id &&
      was.run.position === first &&
      was.last === last &&
      was.elements.length === elements.length &&
      was.elements.every((e, k) => e === elements[k])
    )
      runs.push(was.run);
    else {
      const body = `[${elements.join(",")}]`;
      const digest = rowDigest(body);
      const run = {
        position: first,
        digest,
        json: `${head}"position":${first},"last_position":${last},"digest":"${digest}","item_ids":${JSON.stringify(itemIds)},"items":${body}}`,
      };
      runs.push(run);
      if (remember) storedRunOf.set(firstItem!, { session: s.id, last, elements, run });
    }
    elements = [];
    itemIds = [];
    bytes = 0;
  };
  items.forEach((item, position) => {
    if (ids.has(item.id)) return;
    ids.add(item.id);
    const element = remember ? storedElement(item, position) : storedElementJson(item, position);
    const traceId = item.traceId ?? null;
    if (elements.length && (traceId !== trace || bytes + element.length + 1 > RUN_BYTES)) close();
    if (!elements.length) {
      first = position;
      trace = traceId;
      firstItem = item;
    }
    elements.push(element);
    itemIds.push(item.id);
    bytes += element.length + 1; // and its comma
    last = position;
  });
  close();
  return runs;
}

/**
 * An item's row as transcript_items stored it, and its position, as a JSON array in the order of
 * RUN_ELEMENT (shared/analysis/transcript-rows.ts): an array, not an object, so jsonb stores no
 * key names and sorts no keys (about 160 bytes less per item than an object of the same fields).
 */
function storedElement(item: TranscriptItem, position: number): string {
  const was = storedElementOf.get(item);
  if (was?.position === position) return was.json;
  const json = storedElementJson(item, position);
  storedElementOf.set(item, { position, json });
  return json;
}

/**
 * What a continued fold's items were stored as at its last maturation (maturation/fold-cache.ts):
 * an item never changes once placed (analysis/transcript.ts), so the same item at the same
 * position is the same element, and a run of the same items the same row. Only a kept fold's
 * items are remembered (`remember`), and entries go with their items.
 */
const storedElementOf = new WeakMap<TranscriptItem, { position: number; json: string }>();
const storedRunOf = new WeakMap<
  TranscriptItem,
  { session: string; last: number; elements: string[]; run: StoredRun }
>();

function storedElementJson(item: TranscriptItem, position: number): string {
  const ref = referenceOf(item);
  return JSON.stringify([
    position,
    item.id,
    item.type,
    item.role ?? null,
    item.timestamp,
    item.traceId ?? null,
    item.spanId ?? null,
    storedItem(item, ref),
    ref?.tracePk ?? null,
    ref?.source ?? null,
  ]);
}

/**
 * A run's digest: the top 60 bits of `stableId16(text)` (FNV-1a 64, stableId's first hash) as a
 * decimal int8, a signed int8 whatever the bits. The value `BigInt(0x + stableId16(text).slice(0,
 * 15))` gave, without its hex string and BigInt and with the integer-only hash (shared/analysis/
 * fnv.ts): 1.0-1.8 us per 250-byte row instead of 2.5 (persist.test.ts checks it equal on random text).
 */
export function rowDigest(text: string): string {
  const [hi, lo] = fnv1a64(text);
  return top60Decimal(hi, lo);
}

/** `((hi << 32 | lo) >> 4)` in decimal, for 32-bit unsigned halves. */
export function top60Decimal(hi: number, lo: number): string {
  // hi * 2^28 + (lo >>> 4) < 2^60 exceeds a double's 53 bits: split into decimal halves of 10
  // digits, each step exact (products under 2^53, remainders of integers exact).
  const low28 = lo >>> 4;
  const a1 = Math.floor(hi / 1e5);
  const a0 = hi - a1 * 1e5;
  const p = a1 * 268_435_456; // a1 * 2^28 < 2^44: times 1e5 is (p div 1e5) * 1e10 + (p mod 1e5) * 1e5
  const pr = p % 1e5;
  const q = a0 * 268_435_456; // < 2^45
  const qr = q % 1e10;
  let low = pr * 1e5 + qr + low28;
  let high = (p - pr) / 1e5 + (q - qr) / 1e10;
  const carry = Math.floor(low / 1e10);
  low -= carry * 1e10;
  high += carry;
  return high > 0 ? `${high}${String(low).padStart(10, "0")}` : String(low);
}
