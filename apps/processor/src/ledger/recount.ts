import type { JetStreamManager, StoredMsg } from "@nats-io/jetstream";
import type postgres from "postgres";
import { INGEST_DOOR_HEADER } from "@cellar/shared/nats/catalogue";
import { DL } from "@cellar/shared/nats/dead-letters";
import type { Topology } from "@cellar/shared/nats/topology";

const MINUTE = 60_000;
/** Messages are stamped by JetStream a little after ingest's receivedAt: read this far past a minute. */
const SLACK_MS = 30_000;

/** A stored message at or after `seq`, skipping gaps (null past the last). */
async function messageFrom(
  jsm: JetStreamManager,
  stream: string,
  seq: number,
  last: number,
): Promise<StoredMsg | null> {
  for (let s = seq; s <= last; s++) {
    const m = await jsm.streams.getMessage(stream, { seq: s }).catch(() => null);
    if (m) return m;
  }
  return null;
}

/** The first sequence stored at or after `ms` (binary search on the stream's timestamps). */
async function firstSeqAt(
  jsm: JetStreamManager,
  stream: string,
  ms: number,
  first: number,
  last: number,
): Promise<number> {
  let lo = first;
  let hi = last + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const m = await messageFrom(jsm, stream, mid, last);
    if (!m || m.time.getTime() >= ms) hi = mid;
    else lo = m.seq + 1;
  }
  return lo;
}

/** The service of each item a message carries: a batch's items, or the message's own. */
function servicesOf(body: { serviceName?: unknown; kind?: unknown; items?: unknown }): string[] {
  if (body.kind === "batch" && Array.isArray(body.items))
    return body.items.flatMap((i: { serviceName?: unknown } | null) =>
      typeof i?.serviceName === "string" ? [i.serviceName] : [],
    );
  return typeof body.serviceName === "string" ? [body.serviceName] : [];
}

/**
 * `accepted` of one tenant's minutes counted again from INGEST itself, which keeps every message
 * ingest stored for 7 days: each message of the tenant received in those minutes, by service and
 * door (`Cellar-Door`), a replay (`Cellar-Replay-Of`) not. What an ingest process held in memory
 * when it was killed is found again this way. Raises a count, never lowers one. Returns the items
 * added. A message without a door (an ingest that counted nothing: a release before the ledger,
 * during an online upgrade) is not recounted: the processor that settles its items counts them
 * `accepted` under `unrecorded` (ingest/stored.ts), and the processor of that older release may
 * have stored some uncounted (docs/ledger.md, "Rows the ledger never saw"). Reads at most
 * `maxScanned` messages.
 */
export async function recountAccepted(
  sql: postgres.Sql | postgres.TransactionSql,
  jsm: JetStreamManager,
  t: Topology,
  tenantId: string,
  minutes: number[],
  maxScanned = 200_000,
): Promise<number> {
  if (minutes.length === 0) return 0;
  const wanted = new Set(minutes);
  const from = Math.min(...minutes);
  const to = Math.max(...minutes) + MINUTE;
  const info = await jsm.streams.info(t.ingestStream);
  if (info.state.messages === 0) return 0;
  const counts = new Map<string, number>();
  let seq = await firstSeqAt(jsm, t.ingestStream, from - SLACK_MS, info.state.first_seq, info.state.last_seq);
  for (let scanned = 0; scanned < maxScanned && seq <= info.state.last_seq; scanned++) {
    const m = await messageFrom(jsm, t.ingestStream, seq, info.state.last_seq);
    if (!m || m.time.getTime() > to + SLACK_MS) break;
    seq = m.seq + 1;
    const door = m.header?.get(INGEST_DOOR_HEADER);
    if (!door || m.header?.get(DL.replayOf)) continue;
    let body: { tenantId?: string; serviceName?: string; receivedAt?: string; kind?: string; items?: unknown };
    try {
      body = m.json();
    } catch {
      continue;
    }
    if (body.tenantId !== tenantId || !body.receivedAt) continue;
    const minute = Math.floor(Date.parse(body.receivedAt) / MINUTE) * MINUTE;
    if (!wanted.has(minute)) continue;
    // A batch message (one request's items) counts each item under its service.
    for (const service of servicesOf(body)) {
      const k = `${service}\u0000${minute}\u0000${door}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  }
  if (counts.size === 0) return 0;
  const rows = [...counts].map(([k, count]) => {
    const [service_name, minute, reason] = k.split("\u0000");
    return { service_name, minute: new Date(Number(minute)).toISOString(), reason, count };
  });
  const raised = await sql<{ added: string }[]>`
    with x as (
      select * from json_to_recordset(${sql.json(rows as any)}::json) as x(service_name text, minute timestamptz, reason text, count bigint)
    ), before as (
      select x.*, coalesce(l.count, 0) as had from x
      left join ledger_counts l on l.tenant_id = ${tenantId} and l.service_name = x.service_name and l.minute = x.minute
        and l.stage = 'accepted' and l.reason = x.reason
    ), up as (
      insert into ledger_counts (tenant_id, service_name, minute, stage, reason, count)
      select ${tenantId}, service_name, minute, 'accepted', reason, count from before where count > had
      order by service_name, minute, reason
      on conflict (tenant_id, service_name, minute, stage, reason) do update set count = greatest(ledger_counts.count, excluded.count)
      returning 1
    )
    select coalesce(sum(count - had), 0)::text as added from before where count > had`;
  return Number(raised[0]?.added ?? 0);
}
