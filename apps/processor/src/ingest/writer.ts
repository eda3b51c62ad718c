import type postgres from "postgres";
import type { IngestMessage } from "@cellar/shared/payloads";
import { reopen } from "@cellar/shared/maturation/state";
import type { IngestKind, KindInsert, MessageKind, Placed, Tx, WriteOptions } from "./kind-types.ts";
import { kindOf, MESSAGE_KINDS } from "./kinds.ts";
import { resolveTraceServices, serviceKey } from "./services.ts";
import { upsertCounts } from "@cellar/shared/ledger/upsert";
import { type Counted, type Settled, storedCounts } from "./stored.ts";

export type { WriteOptions } from "./kind-types.ts";

export interface WriteResult {
  /** Sessions still active after the write: their activity keys get refreshed. */
  activeSessionPks: string[];
  /** Replayed traces still active (their earlier batch key may be lost): refreshed one by one. */
  activeTracePks: string[];
  /** Transaction time (µs since epoch) of the write when it inserted traces: the batch key. */
  traceBatchMicros: string | null;
  /** The tenant of each session and trace above: their keys go to its lane (docs/maturation.md, "Tenant lanes"). */
  tenantOf: ReadonlyMap<string, string>;
  /** What the write counted in the ledger in its transactions (WriteOptions.ledger), for /metrics. */
  counted: Counted;
}

/** A session-bound message: a trace or an event (the kinds whose writer's stage is "session"). */
type SessionMessage = IngestMessage & { payload: { session_id: string; environment?: string } };

/** The messages of one kind, with its registry entry. */
interface KindGroup {
  kind: MessageKind<IngestKind>;
  messages: IngestMessage[];
}

/**
 * Writes a batch of ingest messages, each by its kind's writer (the registry, kinds.ts), in named
 * stages. Idempotent: natural keys + ON CONFLICT DO NOTHING, and only rows that were really new
 * touch a session's activity, so a replayed message neither re-opens a matured session nor moves
 * its clock.
 *
 * 1. `byKind`: each message to its kind's group (an unknown kind is refused, never defaulted);
 * 2. `writeAlone`: the kinds written in a transaction of their own (scores), first;
 * then, in one transaction for the session-bound kinds (traces, events):
 * 3. `resolveTraceServices`: the services' rows (created on first use);
 * 4. `seedSessions`: a session row for every session named (activity untouched);
 * 5. `insertRows`: each kind's multi-row insert, pipelined, with the write's batch key;
 * 6. `settleActivity`: what follows the new rows (pending traces, payloads), the sessions they
 *    reopen, and which replayed entities are still active; last, with `opts.ledger`, the items
 *    stored counted in the ledger (stored.ts), so the count commits with the rows or not at all
 *    and a message written again counts nothing (docs/ledger.md).
 */
export async function writeIngestBatch(
  sql: postgres.Sql,
  batch: IngestMessage[],
  opts: WriteOptions = {},
): Promise<WriteResult> {
  const groups = byKind(batch);
  const alone = await writeAlone(sql, groups, opts);
  const sessionGroups = groups.filter((g) => g.kind.writer.stage === "session");
  if (sessionGroups.length === 0)
    return { activeSessionPks: [], activeTracePks: [], traceBatchMicros: null, tenantOf: new Map(), counted: alone };
  const messages = sessionGroups.flatMap((g) => g.messages) as SessionMessage[];
  const result = await sql.begin(async (tx) => {
    const services = await resolveTraceServices(tx, messages);
    const sessions = await seedSessions(tx, sessionGroups, services);
    const inserted = await insertRows(tx, sessionGroups, sessions, opts);
    return settleActivity(tx, inserted, sessions.pks, opts);
  });
  return { ...result, counted: [...alone, ...result.counted] };
}

/** Stage 1: the messages by kind, in the registry's order; a kind not in it throws (PermanentMessageError). */
function byKind(batch: IngestMessage[]): KindGroup[] {
  const groups = new Map<IngestKind, IngestMessage[]>();
  for (const m of batch) {
    const kind = kindOf(m).kind;
    const group = groups.get(kind);
    if (group) group.push(m);
    else groups.set(kind, [m]);
  }
  return (Object.keys(MESSAGE_KINDS) as IngestKind[]).flatMap((k) => {
    const messages = groups.get(k);
    return messages ? [{ kind: MESSAGE_KINDS[k] as MessageKind<IngestKind>, messages }] : [];
  });
}

/** Stage 2: the kinds stored in a transaction of their own (scores), before the others. */
async function writeAlone(sql: postgres.Sql, groups: KindGroup[], opts: WriteOptions): Promise<Counted> {
  const counted: Counted = [];
  for (const { kind, messages } of groups)
    if (kind.writer.stage === "alone")
      counted.push(...(await kind.writer.write(sql, messages as never[], opts.ledger)));
  return counted;
}

interface SeededSessions {
  /** Session pk by service pk and session id. */
  pkOf: Map<string, string>;
  /** Every session row the batch names (replayed or new). */
  pks: string[];
  services: Map<string, string>;
}

const sessionKey = (servicePk: string, sessionId: string) => `${servicePk}\u0000${sessionId}`;

/** Stage 4: makes sure a row exists for every session named (without touching activity yet). */
async function seedSessions(tx: Tx, groups: KindGroup[], services: Map<string, string>): Promise<SeededSessions> {
  const seeds = new Map<
    string,
    { tenant_id: string; trace_service_id: string; session_id: string; environment: string | null; at: string }
  >();
  for (const { kind, messages } of groups) {
    if (kind.writer.stage !== "session") continue;
    for (const m of messages as SessionMessage[]) {
      const svc = services.get(serviceKey(m.tenantId, m.serviceName))!;
      const k = sessionKey(svc, m.payload.session_id);
      if (!seeds.has(k))
        seeds.set(k, {
          tenant_id: m.tenantId,
          trace_service_id: svc,
          session_id: m.payload.session_id,
          environment: m.payload.environment ?? null,
          at: kind.writer.seedAt(m as never),
        });
    }
  }
  const rows = [...seeds.values()];
  // Statements that need no result of the one before go out together (pipelined on the
  // transaction's connection): each still runs after the previous one, in its own snapshot, so
  // the select sees the rows the insert just wrote or waited for. Under load each round trip
  // cost 30-50 ms, and a write was 11 of them (docs/performance.md, "Maturation throughput").
  const seeded = tx`
    insert into sessions (tenant_id, trace_service_id, session_id, environment, first_activity_at, last_activity_at, last_ingested_at)
    select tenant_id, trace_service_id, session_id, environment, at::timestamptz, at::timestamptz, now()
    from json_to_recordset(${tx.json(rows as any)}::json) as x(tenant_id uuid, trace_service_id uuid, session_id text, environment text, at text)
    order by trace_service_id, session_id
    on conflict (trace_service_id, session_id, tenant_id) do nothing`;
  const [, found] = await Promise.all([
    seeded,
    tx<{ id: string; trace_service_id: string; session_id: string }[]>`
      select s.id, s.trace_service_id, s.session_id from sessions s
      join json_to_recordset(${tx.json(rows as any)}::json) as x(trace_service_id uuid, session_id text)
        on s.trace_service_id = x.trace_service_id and s.session_id = x.session_id`,
  ]);
  return {
    pkOf: new Map(found.map((r) => [sessionKey(r.trace_service_id, r.session_id), r.id])),
    pks: [...new Set(found.map((r) => r.id))],
    services,
  };
}

interface Inserted {
  kinds: KindInsert[];
  /** The messages of each kind, as `kinds` (their outcomes come in this order). */
  messages: IngestMessage[][];
  /** The write's batch key when it inserted a trace (a kind that opens traces). */
  batchMicros: string | null;
}

/** Stage 5: every session-bound kind's insert, issued together (pipelined), and the write's transaction time. */
async function insertRows(
  tx: Tx,
  groups: KindGroup[],
  sessions: SeededSessions,
  opts: WriteOptions,
): Promise<Inserted> {
  const place = (m: SessionMessage): Placed<IngestMessage> => {
    const servicePk = sessions.services.get(serviceKey(m.tenantId, m.serviceName))!;
    return { message: m, servicePk, sessionPk: sessions.pkOf.get(sessionKey(servicePk, m.payload.session_id))! };
  };
  const opening = groups.filter((g) => g.kind.maturation === "opens-trace");
  const inserts = groups.map(({ kind, messages }) =>
    kind.writer.stage === "session"
      ? kind.writer.insert(tx, (messages as SessionMessage[]).map(place) as never[], opts)
      : Promise.resolve({ activity: [], settled: () => [] }),
  );
  // now() is the transaction time: every trace inserted here has exactly this ingested_at.
  const [kinds, [batch]] = await Promise.all([
    Promise.all(inserts),
    opening.length
      ? tx<{ micros: string }[]>`select (extract(epoch from now()) * 1000000)::bigint::text as micros`
      : Promise.resolve([] as { micros: string }[]),
  ]);
  const opened = kinds.some((k, i) => groups[i].kind.maturation === "opens-trace" && k.activity.length > 0);
  return { kinds, messages: groups.map((g) => g.messages), batchMicros: opened ? (batch?.micros ?? null) : null };
}

/**
 * Stage 6: what follows the new rows, then only really-new rows count as activity: they (re)open
 * their sessions and move their clocks; sessions and traces that only got replayed rows still
 * need their key refreshed when they are active (a crash may have come between an earlier write
 * and its refresh), looked up only. One round trip (pipelined; each runs when issued, in the order
 * written: a postgres.js query starts at execute() or await).
 */
async function settleActivity(
  tx: Tx,
  inserted: Inserted,
  sessionPks: string[],
  opts: WriteOptions,
): Promise<WriteResult> {
  const activity = new Map<string, { first: number; last: number }>();
  for (const k of inserted.kinds)
    for (const { sessionPk, first, last } of k.activity) {
      const a = activity.get(sessionPk);
      activity.set(sessionPk, a ? { first: Math.min(a.first, first), last: Math.max(a.last, last) } : { first, last });
    }
  const followUps = inserted.kinds.map((k) => k.followUp?.(tx));
  // Locked in id order as maturation locks them; also un-parks a parked session.
  const reopening = reopen(
    tx,
    [...activity].map(([pk, a]) => ({
      pk,
      first: new Date(a.first).toISOString(),
      last: new Date(a.last).toISOString(),
    })),
  );
  const replayedSessions = sessionPks.filter((id) => !activity.has(id));
  const activeSessions = replayedSessions.length
    ? tx<
        { id: string; tenant_id: string }[]
      >`select id, tenant_id from sessions where id = any(${tx.array(replayedSessions)}::uuid[]) and status = 'active'`.execute()
    : Promise.resolve([] as { id: string; tenant_id: string }[]);
  const activeEntities = inserted.kinds.map((k) => k.stillActive?.(tx) ?? Promise.resolve([]));
  const [, updated, active, stillActive, counted] = await Promise.all([
    Promise.all(followUps),
    reopening,
    activeSessions,
    Promise.all(activeEntities),
    countStored(tx, inserted, opts),
  ]);
  return {
    activeSessionPks: [...updated.map((r) => r.id), ...active.map((r) => r.id)],
    activeTracePks: stillActive.flat().map((r) => r.id),
    traceBatchMicros: inserted.batchMicros,
    tenantOf: new Map([...updated, ...active, ...stillActive.flat()].map((r) => [r.id, r.tenant_id])),
    counted,
  };
}

/**
 * The write's `stored` (and `replayed`) counts, added to the ledger as the transaction's last
 * statement: issued after the others (pipelined when every row was new; after one lookup when
 * some were already there), so the ledger's rows, which every processor writing the tenant
 * updates, stay locked only until the commit.
 */
async function countStored(tx: Tx, inserted: Inserted, opts: WriteOptions): Promise<Counted> {
  const ledger = opts.ledger;
  if (!ledger) return [];
  const outcomes = inserted.kinds.map((k) => k.settled(tx));
  const settled = outcomes.some((o) => o instanceof Promise) ? await Promise.all(outcomes) : (outcomes as Settled[][]);
  const { rows, counted } = storedCounts(
    inserted.messages.flatMap((ms, i) => ms.map((message, j) => ({ message, settled: settled[i][j] }))),
    ledger,
  );
  if (rows.length) await upsertCounts(tx, rows);
  return counted;
}
