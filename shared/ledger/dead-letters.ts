import type postgres from "postgres";
import { minuteOf, UNRECORDED_DOOR } from "@cellar/shared/ledger/model";
import { type CountRow, upsertCounts } from "@cellar/shared/ledger/upsert";
import { INGEST_DOOR_HEADER, type StoredDeadLetter } from "@cellar/shared/nats/catalogue";
import { type CountBeforeDelete, DL } from "@cellar/shared/nats/dead-letters";
import type { Topology } from "@cellar/shared/nats/topology";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One dead letter to count: the identity of the message it holds and the counts it adds. The
 * identity is the original's, not the copy's: its message id (`<INGEST stream>:<seq>[:<item>]`)
 * and when JetStream stored it in INGEST (a stream created again numbers from 1 again), so the
 * same message set aside twice, past DEAD_LETTERS's duplicate window, is counted once. A dead
 * letter written before `Cellar-DL-Origin-At` is its own identity: `dead-letter:<seq>` and when
 * DEAD_LETTERS stored it (what migration 0039 made of the keys recorded before it).
 */
export interface DeadLetterCount {
  origin: string;
  /** ISO instant: with `origin`, the key. */
  originAt: string;
  rows: CountRow[];
}

/** The identity a dead letter is counted by (DeadLetterCount). */
export function originOf(seq: number, storedMs: number, headers: StoredDeadLetter["headers"]) {
  const id = headers?.get("Nats-Msg-Id");
  const at = Date.parse(headers?.get(DL.originAt) ?? "");
  if (id && Number.isFinite(at)) return { origin: id, originAt: new Date(at).toISOString() };
  return { origin: `dead-letter:${seq}`, originAt: new Date(storedMs).toISOString() };
}

/**
 * What one dead letter of DEAD_LETTERS counts in the ledger (docs/ledger.md, "Dead letters,
 * counted from DEAD_LETTERS"): an INGEST dead letter written by a release that counts this way
 * (`Cellar-DL-Ledger`) counts `dead_lettered` at its item's service and receivedAt minute, so it
 * meets its `accepted` count, and also `replayed` when it was a replay (its original headers
 * carry `Cellar-Replay-Of`) dead-lettered again, or `accepted` under `unrecorded` when its
 * original carried no door (no ingest counted it: stored.ts counts such an item when stored). A batch set aside whole counts each of its items
 * (an item set aside alone is a dead letter of its own). A body that does not parse counts for the
 * tenant it was recorded with, at the minute it was stored; one with no tenant counts nothing.
 */
export function deadLetterCount(t: Topology, seq: number, storedMs: number, dl: StoredDeadLetter): DeadLetterCount {
  const h = dl.headers;
  const key = originOf(seq, storedMs, h);
  if (h?.get(DL.stream) !== t.ingestStream || !h.get(DL.ledger)) return { ...key, rows: [] };
  let body: { tenantId?: unknown; serviceName?: unknown; receivedAt?: unknown; kind?: unknown; items?: unknown } = {};
  try {
    body = JSON.parse(new TextDecoder().decode(dl.data)) ?? {};
  } catch {}
  const tenant = typeof body.tenantId === "string" ? body.tenantId : h.get(DL.tenant);
  if (!tenant || !UUID.test(tenant)) return { ...key, rows: [] };
  const received = typeof body.receivedAt === "string" ? Date.parse(body.receivedAt) : Number.NaN;
  const minute = new Date(minuteOf(Number.isFinite(received) ? received : storedMs)).toISOString();
  let original: Record<string, string[]> = {};
  try {
    original = JSON.parse(h.get(DL.headers) || "{}") ?? {};
  } catch {}
  const has = (name: string) => Object.keys(original).some((k) => k.toLowerCase() === name.toLowerCase());
  const replayed = has(DL.replayOf);
  // Its INGEST message carried no door: no ingest counted it accepted (stored.ts, LedgerWrite.unrecorded).
  const unrecorded = !replayed && !has(INGEST_DOOR_HEADER);
  const services =
    body.kind === "batch" && Array.isArray(body.items)
      ? body.items.map((i: { serviceName?: unknown } | null) =>
          typeof i?.serviceName === "string" ? i.serviceName : "",
        )
      : [typeof body.serviceName === "string" ? body.serviceName : ""];
  const sums = new Map<string, CountRow>();
  const add = (service_name: string, stage: "dead_lettered" | "replayed" | "accepted", reason = "") => {
    const k = `${service_name}\u0000${stage}`;
    const row = sums.get(k);
    if (row) row.count++;
    else sums.set(k, { tenant_id: tenant.toLowerCase(), service_name, minute, stage, reason, count: 1 });
  };
  for (const service of services) {
    add(service, "dead_lettered");
    if (replayed) add(service, "replayed");
    if (unrecorded) add(service, "accepted", UNRECORDED_DOOR);
  }
  return { ...key, rows: [...sums.values()] };
}

/**
 * Counts dead letters once each: in one transaction, records their keys (`ledger_dead_letters`,
 * ON CONFLICT DO NOTHING) and adds the counts of those it recorded now, so a dead letter
 * delivered again (its ack lost, the processor killed before it acked), or another copy of the
 * same message, adds nothing. Returns what it added (for /metrics).
 */
export async function countDeadLetters(
  sql: postgres.Sql,
  letters: DeadLetterCount[],
): Promise<Array<{ stage: string; reason: string; n: number }>> {
  // A dead letter twice in one batch (given again while the first was in hand, or two copies of
  // one message) is one; one that counts nothing (another stream's, an older release's) needs no key.
  const keyOf = (origin: string, atMs: number) => `${origin}\u0000${atMs}`;
  const byKey = new Map(
    letters.filter((l) => l.rows.length > 0).map((l) => [keyOf(l.origin, Date.parse(l.originAt)), l]),
  );
  letters = [...byKey.values()];
  if (letters.length === 0) return [];
  return sql.begin(async (tx) => {
    const fresh = await tx<{ origin: string; origin_at_ms: string }[]>`
      insert into ledger_dead_letters (tenant_id, origin, origin_at)
      select tenant_id, origin, origin_at from json_to_recordset(${tx.json(
        // A dead letter's rows all count for its one tenant (deadLetterCount).
        letters.map((l) => ({ tenant_id: l.rows[0].tenant_id, origin: l.origin, origin_at: l.originAt })),
      )}::json)
        as x(tenant_id uuid, origin text, origin_at timestamptz)
      order by tenant_id, origin, origin_at
      on conflict (tenant_id, origin, origin_at) do nothing
      returning origin, round(extract(epoch from origin_at) * 1000)::bigint::text as origin_at_ms`;
    // One row per count key: the upsert may not touch a row twice.
    const sums = new Map<string, CountRow>();
    for (const r of fresh.flatMap((f) => byKey.get(keyOf(f.origin, Number(f.origin_at_ms)))?.rows ?? [])) {
      const k = [r.tenant_id, r.service_name, r.minute, r.stage, r.reason].join("\u0000");
      const sum = sums.get(k);
      if (sum) sum.count += r.count;
      else sums.set(k, { ...r });
    }
    const rows = [...sums.values()];
    if (rows.length) await upsertCounts(tx, rows);
    return rows.map((r) => ({ stage: r.stage, reason: r.reason, n: r.count }));
  });
}

/**
 * What a replay or a purge runs before it deletes INGEST dead letters (shared/nats/dead-letters.ts):
 * counts them as `processor-ledger` would, by the same keys, so one deleted while no processor
 * consumes DEAD_LETTERS is still counted, and one the processor counted too (before, or at the
 * same moment) is counted once (countDeadLetters). A failure throws: nothing is deleted.
 */
export function countBeforeDelete(sql: postgres.Sql, t: Topology): CountBeforeDelete {
  return async (letters) => {
    await countDeadLetters(
      sql,
      letters.map((l) => deadLetterCount(t, l.seq, l.storedMs, l.value)),
    );
  };
}
