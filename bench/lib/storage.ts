import type postgres from "postgres";
import { decodePayload } from "@cellar/shared/db/payload-codec";

export interface StorageReport {
  traces: number;
  rawJsonBytesPerTrace: number;
  bytesPerTrace: number;
  ratio: number;
  tables: Array<{ table: string; heap: number; toast: number; indexes: number; perTrace: number }>;
  /** Each index of those tables, bytes per stored trace (where a table's index bytes go). */
  indexes: Array<{ index: string; perTrace: number }>;
}

const TABLES = [
  "traces",
  "trace_payloads",
  "pending_traces",
  "spans",
  "span_ids",
  "events",
  "sessions",
  "trace_analyses",
  "session_analyses",
  "transcript_items",
  "transcript_runs",
  "findings",
  "issues",
];

/**
 * Bytes on disk per stored trace (every telemetry and derived table: heap, TOAST, indexes) next
 * to the raw JSON size of a trace payload (its compact text, sampled), with the breakdown.
 */
export async function storageReport(sql: postgres.Sql): Promise<StorageReport> {
  await sql`vacuum analyze`;
  const [{ n: traces }] = await sql<{ n: number }[]>`select count(*)::int as n from traces`;
  // Raw JSON = the compact text of the payload (as clients send it), whichever shape stores it.
  type Stored = { payload: unknown; payload_z: Uint8Array | null };
  const rawOf = (rows: Stored[]) =>
    rows.length ? rows.reduce((s, r) => s + Buffer.byteLength(JSON.stringify(decodePayload(r))), 0) / rows.length : 0;
  const z = sql.unsafe(
    "(select z.payload_z from trace_payloads z where z.tenant_id = traces.tenant_id and z.trace_pk = traces.id) as payload_z",
  );
  let rawPerTrace = rawOf(await sql<Stored[]>`select payload, ${z} from traces tablesample system (1) limit 5000`);
  if (!rawPerTrace) rawPerTrace = rawOf(await sql<Stored[]>`select payload, ${z} from traces limit 5000`);
  const tables = [];
  let total = 0;
  for (const table of TABLES) {
    const [r] = await sql<{ heap: string; toast: string; indexes: string }[]>`
      select pg_relation_size(c.oid)::text as heap,
        coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)::regclass), 0)::text as toast,
        pg_indexes_size(c.oid)::text as indexes
      from pg_class c where c.relname = ${table} and c.relkind = 'r'`;
    if (!r) continue;
    const bytes = Number(r.heap) + Number(r.toast) + Number(r.indexes);
    total += bytes;
    tables.push({
      table,
      heap: Number(r.heap),
      toast: Number(r.toast),
      indexes: Number(r.indexes),
      perTrace: traces ? Math.round(bytes / traces) : 0,
    });
  }
  const indexRows = await sql<{ index: string; bytes: string }[]>`
    select i.indexrelid::regclass::text as index, pg_relation_size(i.indexrelid)::text as bytes
    from pg_index i join pg_class c on c.oid = i.indrelid
    where c.relname = any(${TABLES}::text[]) and c.relkind = 'r' order by pg_relation_size(i.indexrelid) desc`;
  const indexes = indexRows.map((r) => ({
    index: r.index,
    perTrace: traces ? Math.round(Number(r.bytes) / traces) : 0,
  }));
  const bytesPerTrace = traces ? Math.round(total / traces) : 0;
  return {
    traces,
    rawJsonBytesPerTrace: Math.round(rawPerTrace),
    bytesPerTrace,
    ratio: rawPerTrace ? +(bytesPerTrace / rawPerTrace).toFixed(2) : 0,
    tables,
    indexes,
  };
}

export function printStorage(r: StorageReport): void {
  console.log(
    `storage: ${r.traces.toLocaleString("en")} traces; ${r.bytesPerTrace} bytes on disk per trace vs ${r.rawJsonBytesPerTrace} bytes of raw JSON = ${r.ratio}x`,
  );
  console.log("| table | heap MB | TOAST MB | indexes MB | bytes per trace |\n|---|---|---|---|---|");
  const mb = (b: number) => (b / 1e6).toFixed(1);
  for (const t of r.tables)
    console.log(`| ${t.table} | ${mb(t.heap)} | ${mb(t.toast)} | ${mb(t.indexes)} | ${t.perTrace} |`);
  console.log(
    `indexes, bytes per trace: ${r.indexes
      .filter((i) => i.perTrace > 0)
      .map((i) => `${i.index} ${i.perTrace}`)
      .join(", ")}`,
  );
}
