import type postgres from "postgres";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import { minuteOf } from "@cellar/shared/ledger/model";
import { type CountRow, upsertCounts } from "@cellar/shared/ledger/upsert";
import type { StoredDeadLetter } from "@cellar/shared/nats/catalogue";
import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import { DL } from "@cellar/shared/nats/dead-letters";
import type { Topology } from "@cellar/shared/nats/topology";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One dead letter to count: its key in DEAD_LETTERS and the counts it adds. */
export interface DeadLetterCount {
  seq: number;
  /** When JetStream stored it (ISO): with `seq`, its key (a stream created again numbers from 1 again). */
  storedAt: string;
  rows: CountRow[];
}

/**
 * What one dead letter of DEAD_LETTERS counts in the ledger (docs/ledger.md, "Dead letters,
 * counted from DEAD_LETTERS"): an INGEST dead letter written by a release that counts this way
 * (`Cellar-DL-Ledger`) counts `dead_lettered` at its item's service and receivedAt minute, so it
 * meets its `accepted` count, and also `replayed` when it was a replay (its original headers
 * carry `Cellar-Replay-Of`) dead-lettered again. A batch set aside whole counts each of its items
 * (an item set aside alone is a dead letter of its own). A body that does not parse counts for the
 * tenant it was recorded with, at the minute it was stored; one with no tenant counts nothing.
 */
export function deadLetterCount(t: Topology, seq: number, storedMs: number, dl: StoredDeadLetter): DeadLetterCount {
  const storedAt = new Date(storedMs).toISOString();
  const h = dl.headers;
  if (h?.get(DL.stream) !== t.ingestStream || !h.get(DL.ledger)) return { seq, storedAt, rows: [] };
  let body: { tenantId?: unknown; serviceName?: unknown; receivedAt?: unknown; kind?: unknown; items?: unknown } = {};
  try {
    body = JSON.parse(new TextDecoder().decode(dl.data)) ?? {};
  } catch {}
  const tenant = typeof body.tenantId === "string" ? body.tenantId : h.get(DL.tenant);
  if (!tenant || !UUID.test(tenant)) return { seq, storedAt, rows: [] };
  const received = typeof body.receivedAt === "string" ? Date.parse(body.receivedAt) : Number.NaN;
  const minute = new Date(minuteOf(Number.isFinite(received) ? received : storedMs)).toISOString();
  let replayed = false;
  try {
    const original = JSON.parse(h.get(DL.headers) || "{}") as Record<string, string[]>;
    replayed = Object.keys(original).some((k) => k.toLowerCase() === DL.replayOf.toLowerCase());
  } catch {}
  const services =
    body.kind === "batch" && Array.isArray(body.items)
      ? body.items.map((i: { serviceName?: unknown } | null) =>
          typeof i?.serviceName === "string" ? i.serviceName : "",
        )
      : [typeof body.serviceName === "string" ? body.serviceName : ""];
  const sums = new Map<string, CountRow>();
  const add = (service_name: string, stage: "dead_lettered" | "replayed") => {
    const k = `${service_name}\u0000${stage}`;
    const row = sums.get(k);
    if (row) row.count++;
    else sums.set(k, { tenant_id: tenant.toLowerCase(), service_name, minute, stage, reason: "", count: 1 });
  };
  for (const service of services) {
    add(service, "dead_lettered");
    if (replayed) add(service, "replayed");
  }
  return { seq, storedAt, rows: [...sums.values()] };
}

/**
 * Counts dead letters once each: in one transaction, records their keys (`ledger_dead_letters`,
 * ON CONFLICT DO NOTHING) and adds the counts of those it recorded now, so a dead letter
 * delivered again (its ack lost, the processor killed before it acked) adds nothing. Returns
 * what it added (for /metrics).
 */
export async function countDeadLetters(
  sql: postgres.Sql,
  letters: DeadLetterCount[],
): Promise<Array<{ stage: string; n: number }>> {
  // A dead letter twice in one batch (given again while the first was in hand) is one; one that
  // counts nothing (another stream's, an older release's) needs no key.
  const byKey = new Map(
    letters.filter((l) => l.rows.length > 0).map((l) => [`${l.seq}\u0000${Date.parse(l.storedAt)}`, l]),
  );
  letters = [...byKey.values()];
  if (letters.length === 0) return [];
  return sql.begin(async (tx) => {
    const fresh = await tx<{ seq: string; stored_at_ms: string }[]>`
      insert into ledger_dead_letters (tenant_id, seq, stored_at)
      select tenant_id, seq, stored_at from json_to_recordset(${tx.json(
        // A dead letter's rows all count for its one tenant (deadLetterCount).
        letters.map((l) => ({ tenant_id: l.rows[0].tenant_id, seq: l.seq, stored_at: l.storedAt })),
      )}::json)
        as x(tenant_id uuid, seq bigint, stored_at timestamptz)
      order by tenant_id, seq, stored_at
      on conflict (tenant_id, seq, stored_at) do nothing
      returning seq::text, (extract(epoch from stored_at) * 1000)::bigint::text as stored_at_ms`;
    // One row per count key: the upsert may not touch a row twice.
    const sums = new Map<string, CountRow>();
    for (const r of fresh.flatMap((f) => byKey.get(`${f.seq}\u0000${f.stored_at_ms}`)?.rows ?? [])) {
      const k = [r.tenant_id, r.service_name, r.minute, r.stage, r.reason].join("\u0000");
      const sum = sums.get(k);
      if (sum) sum.count += r.count;
      else sums.set(k, { ...r });
    }
    const rows = [...sums.values()];
    if (rows.length) await upsertCounts(tx, rows);
    return rows.map((r) => ({ stage: r.stage, n: r.count }));
  });
}

/**
 * The handler of the processor's `processor-ledger` consumer of DEAD_LETTERS (deadLetterLedgerConsumer):
 * counts each dead letter once (countDeadLetters) and acks. A Postgres failure throws: the
 * runtime keeps the batch and retries it (transient) or gives it back.
 */
export function deadLetterLedgerHandler(sql: postgres.Sql, t: Topology, ledger?: LedgerCounter) {
  return async (items: Delivery<StoredDeadLetter>[]): Promise<Outcome[]> => {
    const letters = items.map((d) =>
      deadLetterCount(t, d.msg.seq, Math.floor(d.msg.info.timestampNanos / 1e6), d.value),
    );
    for (const c of await countDeadLetters(sql, letters))
      ledger?.counted(c.stage as "dead_lettered" | "replayed", "", c.n);
    return items.map(() => "ack");
  };
}
