import type postgres from "postgres";
import { resolveDetectorConfig, type DetectorConfig } from "@cellar/shared/analysis/detector-config";
import type { IntentDefinition } from "../analysis/catalog.ts";
import type { LatencyNorms } from "../analysis/detectors.ts";
import { decodeTraceContribution, traceContributionOf } from "../analysis/contribution.ts";
import { decodeDigest } from "../analysis/digest.ts";
import type { SessionAnalyzer } from "../analysis/session.ts";
import type { EventInput, TraceInput } from "../analysis/transcript.ts";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { traceMetricsBaseFieldsSql, type TraceMetricsBaseFields } from "@cellar/shared/db/trace-metrics";
import { PENDING_OF_TRACE, parked, type MaturedRow } from "@cellar/shared/maturation/state";
import { MESSAGE_EVENT_NAMES } from "../otlp/linked.ts";
import { mergeOtelMessageEvents } from "../otlp/merge.ts";

/**
 * The maturation store: every read of what a maturation works on. Persisting is in persist.ts
 * and persist-findings.ts; the analysis (../analysis) never touches Postgres.
 */

/** A session or trace row as the maturation queries select it (selectMaturing, one query shape). */
export interface MaturingRow extends MaturedRow {
  published_count?: number;
  service_name: string;
  activity_seq?: number;
  last_ingested_at?: Date;
  idle?: boolean;
  due_in_ms?: number;
  /** Failure bookkeeping (sessions only): attempts so far, and whether it is parked as failed. */
  maturation_failures?: number;
  failed?: boolean;
  retry_in_ms?: number;
}
export type SessionRow = MaturingRow;
export interface TraceRow extends MaturingRow {
  trace_id: string;
  /** The pending row's key (`ingested_at` as text, exact); absent once the row is gone. */
  ingested_key?: string | null;
}

type Sql = postgres.Sql | postgres.TransactionSql;

/** An events row as the three history reads below select it. */
type EventRow = {
  id: string;
  name: string;
  timestamp: Date;
  severity_number: number | null;
  attributes: Record<string, unknown>;
  body: Record<string, unknown> | null;
  trace_id: string | null;
};

const eventInput = (e: EventRow): EventInput => ({
  id: e.id,
  name: e.name,
  timestamp: new Date(e.timestamp),
  severityNumber: e.severity_number,
  attributes: e.attributes,
  body: e.body,
  traceId: e.trace_id,
});
/** Stored bytes of a trace's payload, whichever column holds it (no payload read). */
const storedBytes = (sql: Sql) =>
  sql.unsafe(
    "coalesce((select pg_column_size(z.payload_z) from trace_payloads z where z.tenant_id = traces.tenant_id and z.trace_pk = traces.id), pg_column_size(traces.payload))",
  );
/**
 * A join `z` over `traces` giving what a session's analysis reads of each trace: its deflated
 * payload (null on a row still holding jsonb), or with `digests` its digest where it has one
 * (migration 0031, docs/analyse-once.md), and then no payload.
 */
const storedForAnalysis = (sql: Sql, digests: boolean) =>
  sql.unsafe(
    `left join lateral (select ${digests ? "z.digest_z, case when z.digest_z is null then z.payload_z end as payload_z" : "null::bytea as digest_z, z.payload_z"}
      from trace_payloads z where z.tenant_id = traces.tenant_id and z.trace_pk = traces.id) z on true`,
  );
/** A traces row as the history reads select it. */
type HistoryTraceRow = {
  id: string;
  trace_id: string;
  start_time: Date;
  end_time: Date;
  payload: unknown;
  payload_z: Uint8Array | null;
  digest_z: Uint8Array | null;
};
function traceInput(r: HistoryTraceRow): TraceInput {
  const trace = { pk: r.id, traceId: r.trace_id, startTime: new Date(r.start_time), endTime: new Date(r.end_time) };
  return r.digest_z ? decodeDigest(r.digest_z, trace) : { ...trace, payload: decodePayload(r) };
}
/** How the history reads take each trace: from its digest where it has one (the default), or whole. */
export interface HistoryReadOptions {
  digests?: boolean;
}
export type MaturingFilter =
  | { lockIds: string[]; windowSeconds: number }
  | { owedOlderThanSeconds: number; limit: number };

/**
 * The shared select of a maturing row, written once: locked by id (in id order, no deadlock
 * with another processor) with its idle/due/failure state, or the rows whose MATURED publish is
 * still owed.
 */
export function selectMaturing(sql: Sql, kind: "session", filter: MaturingFilter): Promise<SessionRow[]>;
export function selectMaturing(sql: Sql, kind: "trace", filter: MaturingFilter): Promise<TraceRow[]>;
export function selectMaturing(sql: Sql, kind: "session" | "trace", filter: MaturingFilter): Promise<MaturingRow[]> {
  if (kind === "trace") return selectMaturingTraces(sql, filter);
  const cols = sql`, s.activity_seq, s.last_ingested_at, s.maturation_failures,
        ${parked(sql)} as failed,
        greatest(0, extract(epoch from coalesce(s.maturation_retry_at, now()) - now()) * 1000)::float8 as retry_in_ms`;
  if ("lockIds" in filter) {
    return sql<MaturingRow[]>`
      select s.id, s.tenant_id, s.trace_service_id, s.session_id, s.status, s.maturation_count, s.matured_at, s.published_count,
        ts.name as service_name ${cols},
        s.last_ingested_at <= now() - make_interval(secs => ${filter.windowSeconds}) as idle,
        extract(epoch from s.last_ingested_at + make_interval(secs => ${filter.windowSeconds}) - now())::float8 * 1000 as due_in_ms
      from sessions s join trace_services ts on ts.id = s.trace_service_id
      where s.id = any(${sql.array(filter.lockIds)}::uuid[]) order by s.id for no key update of s`;
  }
  return sql<MaturingRow[]>`
    select s.id, s.tenant_id, s.trace_service_id, s.session_id, s.status, s.maturation_count, s.matured_at, s.published_count,
      ts.name as service_name ${cols}
    from sessions s join trace_services ts on ts.id = s.trace_service_id
    where s.published_count < s.maturation_count and s.matured_at < now() - make_interval(secs => ${filter.owedOlderThanSeconds})
    order by s.matured_at limit ${filter.limit}`;
}

/**
 * A trace's state is its pending row (migration 0016): active while `matured_at` is null,
 * matured with the publish owed once set, matured and published once gone. Locking takes the
 * pending rows (in trace id order): the trace row itself is never updated.
 */
function selectMaturingTraces(sql: Sql, filter: MaturingFilter): Promise<MaturingRow[]> {
  const state = sql`
    case when l.trace_pk is not null and l.matured_at is null then 'active' else 'matured' end as status,
    case when l.trace_pk is not null and l.matured_at is null then 0 else 1 end as maturation_count,
    case when l.trace_pk is null then 1 else 0 end as published_count,
    coalesce(l.matured_at, ta.computed_at) as matured_at`;
  if ("lockIds" in filter) {
    const ids = sql.array(filter.lockIds);
    return sql<MaturingRow[]>`
      with l as (
        select p.trace_pk, p.ingested_at, p.matured_at from pending_traces p join traces t on ${sql.unsafe(PENDING_OF_TRACE)}
        where t.id = any(${ids}::uuid[]) order by p.trace_pk for update of p)
      select t.id, t.tenant_id, t.trace_service_id, t.session_id, t.trace_id, ts.name as service_name, ${state},
        l.ingested_at::text as ingested_key,
        t.ingested_at <= now() - make_interval(secs => ${filter.windowSeconds}) as idle,
        extract(epoch from t.ingested_at + make_interval(secs => ${filter.windowSeconds}) - now())::float8 * 1000 as due_in_ms
      from traces t join trace_services ts on ts.id = t.trace_service_id
        left join l on l.trace_pk = t.id left join trace_analyses ta on ta.trace_pk = t.id
      where t.id = any(${ids}::uuid[]) order by t.id`;
  }
  return sql<MaturingRow[]>`
    select t.id, t.tenant_id, t.trace_service_id, t.session_id, t.trace_id, ts.name as service_name, ${state},
      l.ingested_at::text as ingested_key
    from pending_traces l join traces t on t.id = l.trace_pk and t.ingested_at = l.ingested_at
      join trace_services ts on ts.id = t.trace_service_id left join trace_analyses ta on ta.trace_pk = t.id
    where l.matured_at < now() - make_interval(secs => ${filter.owedOlderThanSeconds})
    order by l.matured_at limit ${filter.limit}`;
}

/** Bounds of one page of history read into memory (docs/maturation.md, "Bounded memory"). */
export interface HistoryPaging {
  /** Stored payload bytes (pg_column_size) per page of traces; a bigger single trace is read alone. */
  traceBytesPerPage: number;
  /** Traces per page of a streamed history (each counted at the ingest cap: no size is read there). */
  tracesPerPage: number;
  /**
   * Payload JSON per page of small sessions read together: `traces.payload_bytes` (migration
   * 0025), or UNSIZED_TRACE_BYTES for an older row without it.
   */
  jsonBytesPerPage: number;
  /** Traces per page of small sessions read together, whatever their size. */
  tracesPerBatch: number;
  eventsPerPage: number;
}
/** What a trace without `payload_bytes` is assumed to inflate to: the default ingest body cap. */
export const UNSIZED_TRACE_BYTES = 4 * 1024 * 1024;
/**
 * The byte budget counts stored bytes (`pg_column_size`: deflated, or TOAST-compressed jsonb on
 * older rows); the JSON budget what the page inflates to: 64 MiB, what 16 traces at the ingest
 * cap came to before traces carried their size, so older rows page as they did.
 */
export const DEFAULT_HISTORY_PAGING: HistoryPaging = {
  traceBytesPerPage: 8 * 1024 * 1024,
  tracesPerPage: 16,
  jsonBytesPerPage: 16 * UNSIZED_TRACE_BYTES,
  tracesPerBatch: 1_000,
  eventsPerPage: 500,
};

export interface HistorySize {
  id: string;
  traces: number;
  traceBytes: number;
  /** What the traces' payloads inflate to (UNSIZED_TRACE_BYTES each where unknown). */
  jsonBytes: number;
  events: number;
}

/** How much history each session has (one query for a chunk; no payload read). */
export async function historySizes(tx: Sql, ids: string[]): Promise<Map<string, HistorySize>> {
  const rows = await tx<{ id: string; traces: number; trace_bytes: number; json_bytes: number; events: number }[]>`
    select s.id, t.traces, t.trace_bytes, t.json_bytes,
      (select count(*)::int from events e where e.session_pk = s.id) as events
    from sessions s cross join lateral (
      select count(*)::int as traces, coalesce(sum(${storedBytes(tx)}), 0)::float8 as trace_bytes,
        coalesce(sum(coalesce(traces.payload_bytes, ${UNSIZED_TRACE_BYTES}::int8)), 0)::float8 as json_bytes
      from traces where traces.session_pk = s.id) t
    where s.id = any(${tx.array(ids)}::uuid[])`;
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        traces: r.traces,
        traceBytes: Number(r.trace_bytes),
        jsonBytes: Number(r.json_bytes),
        events: r.events,
      },
    ]),
  );
}

/**
 * Plans how a chunk's histories are read: sessions that fit one page together are read in one
 * batch (two queries for the group), any other session is streamed alone page by page. A page
 * is bounded in stored bytes, in the JSON its payloads inflate to, in traces and in events. Pure.
 */
export function planHistoryReads(
  ids: string[],
  sizes: Map<string, HistorySize>,
  paging: HistoryPaging,
): Array<{ batch: string[] } | { stream: string }> {
  const plan: Array<{ batch: string[] } | { stream: string }> = [];
  let group: string[] = [];
  let traces = 0,
    bytes = 0,
    json = 0,
    events = 0;
  const flush = () => {
    if (group.length) plan.push({ batch: group });
    group = [];
    traces = bytes = json = events = 0;
  };
  for (const id of ids) {
    const s = sizes.get(id) ?? { id, traces: 0, traceBytes: 0, jsonBytes: 0, events: 0 };
    if (
      s.traces > paging.tracesPerBatch ||
      s.traceBytes > paging.traceBytesPerPage ||
      s.jsonBytes > paging.jsonBytesPerPage ||
      s.events > paging.eventsPerPage
    ) {
      plan.push({ stream: id });
      continue;
    }
    if (
      traces + s.traces > paging.tracesPerBatch ||
      bytes + s.traceBytes > paging.traceBytesPerPage ||
      json + s.jsonBytes > paging.jsonBytesPerPage ||
      events + s.events > paging.eventsPerPage
    )
      flush();
    group.push(id);
    traces += s.traces;
    bytes += s.traceBytes;
    json += s.jsonBytes;
    events += s.events;
  }
  flush();
  return plan;
}

/** The whole history of a few small sessions (planHistoryReads keeps the group within one page). */
export async function loadHistoryBatch(
  tx: Sql,
  sessions: Array<{ id: string; trace_service_id: string }>,
  opts: HistoryReadOptions = {},
): Promise<Map<string, { traces: TraceInput[]; events: EventInput[] }>> {
  const ids = sessions.map((s) => s.id);
  const [traces, events] = await Promise.all([
    tx<(HistoryTraceRow & { session_pk: string })[]>`
      select traces.session_pk, traces.id, traces.trace_id, traces.start_time, traces.end_time, traces.payload, z.payload_z, z.digest_z
      from traces ${storedForAnalysis(tx, opts.digests ?? true)} where traces.session_pk = any(${tx.array(ids)}::uuid[])`,
    tx<(EventRow & { session_pk: string })[]>`
      select session_pk, id, name, timestamp, severity_number, attributes, body, trace_id from events where session_pk = any(${tx.array(ids)}::uuid[])`,
  ]);
  const out = new Map(ids.map((id) => [id, { traces: [] as TraceInput[], events: [] as EventInput[] }]));
  for (const r of traces) out.get(r.session_pk)?.traces.push(traceInput(r));
  const conversation = await otelConversationTraceIds(tx, ids);
  for (const e of events) {
    if (isConversationEvent(e.name, e.trace_id, conversation.get(e.session_pk))) continue;
    out.get(e.session_pk)?.events.push(eventInput(e));
  }
  for (const s of sessions) {
    const h = out.get(s.id)!;
    h.traces = await withOtelMessages(tx, s.trace_service_id, h.traces);
  }
  return out;
}

/*
 * OTLP calls whose messages came as log records (docs/otlp.md, "Messages as log records"): the
 * instrumentation sends a call's messages apart from its span, as events tied to the span's trace
 * id, possibly stored in another session. Those events are the call's conversation, not things
 * that happened beside it: a waiting call gets them back (mergeOtelMessageEvents), and the
 * session's event stream leaves them out.
 */
const MESSAGE_NAMES = new Set(MESSAGE_EVENT_NAMES);

function isConversationEvent(name: string, traceId: string | null, conversation: Set<string> | undefined): boolean {
  return Boolean(conversation && traceId && MESSAGE_NAMES.has(name) && conversation.has(traceId));
}

/**
 * Per session: trace ids whose message events here belong to a call, either a call of this
 * session still waiting for its messages, or a call stored in another session.
 */
export async function otelConversationTraceIds(tx: Sql, sessionPks: string[]): Promise<Map<string, Set<string>>> {
  const rows = await tx<{ session_pk: string; trace_id: string }[]>`
    select distinct e.session_pk, e.trace_id from events e
    where e.session_pk = any(${tx.array(sessionPks)}::uuid[]) and e.trace_id is not null and e.name = any(${tx.array(MESSAGE_EVENT_NAMES)}::text[])
      and exists (select 1 from traces t where t.trace_service_id = e.trace_service_id and t.trace_id = e.trace_id
        and (t.session_pk <> e.session_pk or coalesce(t.awaits_messages, t.payload->'otel'->>'messages' = 'none')))`;
  const out = new Map<string, Set<string>>();
  for (const r of rows) out.set(r.session_pk, (out.get(r.session_pk) ?? new Set()).add(r.trace_id));
  return out;
}

/** Calls still waiting for their messages get them from their message events, in any session of the service. */
export async function withOtelMessages(tx: Sql, serviceId: string, traces: TraceInput[]): Promise<TraceInput[]> {
  const waiting = traces.filter((t) => t.payload?.otel?.messages === "none").map((t) => t.traceId);
  if (waiting.length === 0) return traces;
  const rows = await tx<EventRow[]>`
    select id, name, timestamp, severity_number, attributes, body, trace_id from events
    where trace_service_id = ${serviceId} and trace_id = any(${tx.array(waiting)}::text[]) and name = any(${tx.array(MESSAGE_EVENT_NAMES)}::text[])`;
  const events = rows.map(eventInput);
  // A call given its messages back no longer has the stored payload: its items keep copies.
  return mergeOtelMessageEvents(traces, events).traces.map((t, i) =>
    t.payload === traces[i].payload ? t : { ...t, pk: undefined },
  );
}

/**
 * A trace's place in its session's history: (start_time, end_time, trace_id). The end breaks ties
 * of start stamps within one clock tick (an SDK stamps milliseconds): of two calls made one after
 * the other, the earlier ended no later than the later one started. Times as Postgres text, so
 * the keyset compares them exactly (a Date parameter would drop the microseconds).
 */
type TraceKey = { start_key: string; end_key: string; trace_id: string };
const traceKeySql = (tx: Sql, k: TraceKey) =>
  tx`(${k.start_key}::timestamptz, ${k.end_key}::timestamptz, ${k.trace_id} collate "C")`;

/**
 * Feeds a session's whole history to the analyzer in pages, merged in time order: traces by
 * (start_time, end_time, trace_id) and events by (timestamp, id), keyset-paged so each page is
 * one index range. Only one page of payloads is in memory at a time. Runs in the maturation transaction,
 * under the session's row lock (ingest writes to the session wait for it).
 */
export async function streamHistory(
  tx: Sql,
  session: { id: string; trace_service_id: string },
  analyzer: Pick<SessionAnalyzer, "addTrace" | "addEvent">,
  paging: HistoryPaging = DEFAULT_HISTORY_PAGING,
  opts: HistoryReadOptions = {},
): Promise<void> {
  const sessionPk = session.id;
  const conversationEvents = (await otelConversationTraceIds(tx, [sessionPk])).get(sessionPk);
  const traces = tracePages(tx, sessionPk, session.trace_service_id, paging, opts.digests ?? true)[
    Symbol.asyncIterator
  ]();
  const events = eventPages(tx, sessionPk, paging, conversationEvents)[Symbol.asyncIterator]();
  let t = await traces.next();
  let e = await events.next();
  while (!t.done || !e.done) {
    if (!t.done && (e.done || t.value.startTime.getTime() <= e.value.timestamp.getTime())) {
      analyzer.addTrace(t.value);
      // A big trace is tens of ms of synchronous analysis: let the ingest loop run in between.
      await new Promise((r) => setImmediate(r));
      t = await traces.next();
    } else if (!e.done) {
      analyzer.addEvent(e.value);
      e = await events.next();
    }
  }
}

async function* tracePages(
  tx: Sql,
  sessionPk: string,
  serviceId: string,
  paging: HistoryPaging,
  digests: boolean,
): AsyncGenerator<TraceInput> {
  let after: TraceKey | null = null;
  for (;;) {
    // Sizes first (no payload read), then the payloads of a prefix that fits the byte budget.
    const heads: Array<TraceKey & { bytes: number }> = await tx`
      select trace_id, start_time::text as start_key, end_time::text as end_key, ${storedBytes(tx)}::int as bytes from traces
      where session_pk = ${sessionPk} ${after ? tx`and (start_time, end_time, trace_id collate "C") > ${traceKeySql(tx, after)}` : tx``}
      order by start_time, end_time, trace_id collate "C" limit ${paging.tracesPerPage}`;
    if (heads.length === 0) return;
    let take = 1;
    let bytes = heads[0].bytes;
    while (take < heads.length && bytes + heads[take].bytes <= paging.traceBytesPerPage) bytes += heads[take++].bytes;
    const last = heads[take - 1];
    const rows: HistoryTraceRow[] = await tx`
      select traces.id, trace_id, start_time, end_time, payload, z.payload_z, z.digest_z
      from traces ${storedForAnalysis(tx, digests)}
      where session_pk = ${sessionPk}
        ${after ? tx`and (start_time, end_time, trace_id collate "C") > ${traceKeySql(tx, after)}` : tx``}
        and (start_time, end_time, trace_id collate "C") <= ${traceKeySql(tx, last)}
      order by start_time, end_time, trace_id collate "C"`;
    const page = rows.map(traceInput);
    for (const t of await withOtelMessages(tx, serviceId, page)) yield t;
    after = { start_key: last.start_key, end_key: last.end_key, trace_id: last.trace_id };
  }
}

async function* eventPages(
  tx: Sql,
  sessionPk: string,
  paging: HistoryPaging,
  conversation?: Set<string>,
): AsyncGenerator<EventInput> {
  let after: { timestamp: Date; id: string } | null = null;
  for (;;) {
    const rows: EventRow[] = await tx`
      select id, name, timestamp, severity_number, attributes, body, trace_id from events
      where session_pk = ${sessionPk} ${after ? tx`and (timestamp, id) > (${after.timestamp}, ${after.id}::uuid)` : tx``}
      order by timestamp, id limit ${paging.eventsPerPage}`;
    for (const e of rows) {
      if (isConversationEvent(e.name, e.trace_id, conversation)) continue;
      yield eventInput(e);
    }
    if (rows.length < paging.eventsPerPage) return;
    const last = rows[rows.length - 1];
    after = { timestamp: last.timestamp, id: last.id };
  }
}

/** What the claim and the MATURED message need of a trace, read with its payload (no lock: never updated). */
export interface TraceIdentity {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  service_name: string;
  session_id: string;
  trace_id: string;
  /** Its own `ingested_at` as text (exact): the key of its pending row. */
  ingested_key: string;
}

/**
 * The payload parts a trace's own metrics need (responses and model, not the request's history),
 * its base fields (the metrics delta), and what the claim and the MATURED message need of it. The
 * parts come from the trace's contribution, written with its pending row while the writer held
 * the payload (migration 0028, docs/analyse-once.md); a trace without one (written before) is read
 * from its payload as before: inflated and parsed whole, or reduced by Postgres on a jsonb row.
 */
export async function loadTracesForMetrics(
  tx: Sql,
  ids: string[],
): Promise<Array<{ id: string; tenantId: string; row: TraceIdentity; base: TraceMetricsBaseFields } & TraceInput>> {
  const rows = await tx<
    (TraceIdentity & {
      contribution: string | null;
      payload: unknown;
      payload_z: Uint8Array | null;
      start_time: Date;
      end_time: Date;
    } & TraceMetricsBaseFields)[]
  >`
    select traces.id, traces.tenant_id, traces.trace_service_id, ts.name as service_name, traces.session_id, traces.trace_id,
      traces.ingested_at::text as ingested_key, traces.start_time, traces.end_time, p.contribution,
      case when p.contribution is null then (select z.payload_z from trace_payloads z where z.tenant_id = traces.tenant_id and z.trace_pk = traces.id) end as payload_z,
      ${tx.unsafe(traceMetricsBaseFieldsSql("traces"))},
      case when p.contribution is null and traces.payload is not null then jsonb_build_object('request', jsonb_build_object('model', traces.payload->'request'->'model'), 'responses', traces.payload->'responses') end as payload
    from traces join trace_services ts on ts.id = traces.trace_service_id
      left join pending_traces p on p.ingested_at = traces.ingested_at and p.trace_pk = traces.id
    where traces.id = any(${tx.array(ids)}::uuid[])`;
  return rows.map((r) => ({
    id: r.id,
    tenantId: r.tenant_id,
    row: r,
    base: r,
    traceId: r.trace_id,
    startTime: new Date(r.start_time),
    endTime: new Date(r.end_time),
    payload: r.contribution
      ? decodeTraceContribution(r.contribution)
      : r.payload_z
        ? traceContributionOf(decodePayload(r))
        : decodePayload(r),
  }));
}

export interface ServiceContext {
  config: DetectorConfig;
  intents: IntentDefinition[];
}
/** Per service: detector thresholds (defaults + overrides) and intent definitions. */
export async function loadServiceContext(tx: Sql, serviceIds: string[]): Promise<Map<string, ServiceContext>> {
  const [settings, intents] = await Promise.all([
    tx<
      { trace_service_id: string; settings: unknown }[]
    >`select trace_service_id, settings from detector_settings where trace_service_id = any(${tx.array(serviceIds)}::uuid[])`,
    tx<(IntentDefinition & { trace_service_id: string })[]>`
      select id, trace_service_id, name, description, examples from intent_definitions
      where trace_service_id = any(${tx.array(serviceIds)}::uuid[]) order by name`,
  ]);
  const out = new Map(
    serviceIds.map((id) => [id, { config: resolveDetectorConfig(null), intents: [] as IntentDefinition[] }]),
  );
  for (const s of settings) out.get(s.trace_service_id)!.config = resolveDetectorConfig(s.settings);
  for (const i of intents) out.get(i.trace_service_id)!.intents.push(i);
  return out;
}

/** Loads the service's latency baseline; the store's caller caches it (norms.ts). */
/**
 * `via`: the connection to read through when the baseline is not cached. A maturation passes its
 * own transaction: a read on the pool from inside it waits for a free connection while holding
 * its row locks, and when every other connection waits on those locks nothing moves again.
 */
export type LatencyNormsSource = (
  traceServiceId: string,
  config: DetectorConfig,
  via?: postgres.Sql | postgres.TransactionSql,
) => Promise<LatencyNorms>;

/**
 * Only the given traces and events of some sessions (continued folds' new history: fold-cache.ts),
 * per session in the order a streamed history reads them: traces by (start_time, end_time,
 * trace_id), events by (timestamp, id). Two statements for the lot.
 */
export async function loadHistoryExtensions(
  tx: Sql,
  wanted: Map<string, { traces: string[]; events: string[] }>,
  opts: HistoryReadOptions = {},
): Promise<Map<string, { traces: TraceInput[]; events: EventInput[] }>> {
  const sessions = tx.array([...wanted.keys()]);
  const traceIds = [...wanted.values()].flatMap((w) => w.traces);
  const eventIds = [...wanted.values()].flatMap((w) => w.events);
  const [traces, events] = await Promise.all([
    traceIds.length
      ? tx<(HistoryTraceRow & { session_pk: string })[]>`
          select traces.session_pk, traces.id, traces.trace_id, traces.start_time, traces.end_time, traces.payload, z.payload_z, z.digest_z
          from traces ${storedForAnalysis(tx, opts.digests ?? true)}
          where traces.session_pk = any(${sessions}::uuid[]) and traces.id = any(${tx.array(traceIds)}::uuid[])
          order by traces.start_time, traces.end_time, traces.trace_id collate "C"`
      : [],
    eventIds.length
      ? tx<(EventRow & { session_pk: string })[]>`
          select session_pk, id, name, timestamp, severity_number, attributes, body, trace_id from events
          where session_pk = any(${sessions}::uuid[]) and id = any(${tx.array(eventIds)}::uuid[]) order by timestamp, id`
      : [],
  ]);
  const out = new Map([...wanted.keys()].map((id) => [id, { traces: [] as TraceInput[], events: [] as EventInput[] }]));
  for (const r of traces) out.get(r.session_pk)?.traces.push(traceInput(r));
  for (const e of events) out.get(e.session_pk)?.events.push(eventInput(e));
  return out;
}

/** Feeds traces and events already in the streamed order, merged as streamHistory merges them. */
export function feedInOrder(
  a: Pick<SessionAnalyzer, "addTrace" | "addEvent">,
  traces: TraceInput[],
  events: EventInput[],
): void {
  let i = 0;
  let j = 0;
  while (i < traces.length || j < events.length) {
    if (i < traces.length && (j >= events.length || traces[i].startTime.getTime() <= events[j].timestamp.getTime()))
      a.addTrace(traces[i++]);
    else a.addEvent(events[j++]);
  }
}
