import type postgres from "postgres";
import type { IngestMessage } from "@cellar/shared/payloads";
import { encodePayloadSized, usageTotals } from "@cellar/shared/db/payload-codec";
import { openTraces, reopen, stillActiveTraces } from "@cellar/shared/maturation/state";
import { encodeTraceContribution } from "../analysis/contribution.ts";
import { DIGEST_MIN_JSON_BYTES, encodeDigest } from "../analysis/digest.ts";
import { writeScores } from "./scores.ts";
import { resolveTraceServices, serviceKey } from "./services.ts";
import { deriveSpans, spanIdKey, traceIdFor } from "./spans.ts";

export interface WriteResult {
  /** Sessions still active after the write: their activity keys get refreshed. */
  activeSessionPks: string[];
  /** Replayed traces still active (their earlier batch key may be lost): refreshed one by one. */
  activeTracePks: string[];
  /** Transaction time (µs since epoch) of the write when it inserted traces: the batch key. */
  traceBatchMicros: string | null;
}

/**
 * Writes a batch of ingest messages in one transaction with multi-row statements. Idempotent:
 * natural keys + ON CONFLICT DO NOTHING, and only rows that were really new touch a session's
 * activity, so a replayed message neither re-opens a matured session nor moves its clock.
 */
export interface WriteOptions {
  /** Payloads of at least this many bytes of JSON get a session digest (default DIGEST_MIN_JSON_BYTES). */
  digestMinJsonBytes?: number;
}

export async function writeIngestBatch(
  sql: postgres.Sql,
  batch: IngestMessage[],
  opts: WriteOptions = {},
): Promise<WriteResult> {
  const messages = await writeScores(sql, batch); // scores: their own table (./scores.ts); traces and events below
  if (messages.length === 0) return { activeSessionPks: [], activeTracePks: [], traceBatchMicros: null };
  return sql.begin(async (tx) => {
    const services = await resolveTraceServices(
      tx,
      messages.map((m) => ({ tenantId: m.tenantId, serviceName: m.serviceName })),
    );

    // Sessions: make sure a row exists (without touching activity yet).
    const sessionSeeds = new Map<
      string,
      { tenant_id: string; trace_service_id: string; session_id: string; environment: string | null; at: string }
    >();
    for (const m of messages) {
      const svc = services.get(serviceKey(m.tenantId, m.serviceName))!;
      const at = m.kind === "trace" ? m.payload.start_time : m.payload.timestamp;
      const k = `${svc}\u0000${m.payload.session_id}`;
      if (!sessionSeeds.has(k))
        sessionSeeds.set(k, {
          tenant_id: m.tenantId,
          trace_service_id: svc,
          session_id: m.payload.session_id,
          environment: m.payload.environment ?? null,
          at,
        });
    }
    const seeds = [...sessionSeeds.values()];
    // Statements that need no result of the one before go out together (pipelined on the
    // transaction's connection): each still runs after the previous one, in its own snapshot, so
    // the select sees the rows the insert just wrote or waited for. Under load each round trip
    // cost 30-50 ms, and a write was 11 of them (docs/performance.md, "Maturation throughput").
    const seeded = tx`
      insert into sessions (tenant_id, trace_service_id, session_id, environment, first_activity_at, last_activity_at, last_ingested_at)
      select tenant_id, trace_service_id, session_id, environment, at::timestamptz, at::timestamptz, now()
      from json_to_recordset(${tx.json(seeds as any)}::json) as x(tenant_id uuid, trace_service_id uuid, session_id text, environment text, at text)
      order by trace_service_id, session_id
      on conflict (trace_service_id, session_id, tenant_id) do nothing`;
    const [, sessionRows] = await Promise.all([
      seeded,
      tx<{ id: string; trace_service_id: string; session_id: string }[]>`
        select s.id, s.trace_service_id, s.session_id from sessions s
        join json_to_recordset(${tx.json(seeds as any)}::json) as x(trace_service_id uuid, session_id text)
          on s.trace_service_id = x.trace_service_id and s.session_id = x.session_id`,
    ]);
    const sessionPkOf = new Map(sessionRows.map((r) => [`${r.trace_service_id}\u0000${r.session_id}`, r.id]));

    const traceRows: Record<string, unknown>[] = [];
    const contributions = new Map<string, string>();
    const eventRows: Record<string, unknown>[] = [];
    for (const m of messages) {
      const svc = services.get(serviceKey(m.tenantId, m.serviceName))!;
      const sessionPk = sessionPkOf.get(`${svc}\u0000${m.payload.session_id}`)!;
      if (m.kind === "trace") {
        const p = m.payload;
        const traceId = traceIdFor(p, m.messageId);
        const usage = usageTotals(p);
        // Deflated by the app, not parsed and pglz-compressed by Postgres (shared/db/payload-codec.ts).
        const encoded = encodePayloadSized(p);
        // What the trace contributes to its own analysis, taken now while the payload is parsed
        // (trace maturation reads it instead of the payload: docs/analyse-once.md).
        contributions.set(`${svc}\u0000${traceId}`, encodeTraceContribution(p));
        traceRows.push({
          tenant_id: m.tenantId,
          trace_service_id: svc,
          session_pk: sessionPk,
          trace_id: traceId,
          session_id: p.session_id,
          environment: p.environment ?? null,
          provider: p.provider,
          model: p.request.model,
          start_time: p.start_time,
          end_time: p.end_time,
          payload_z: encoded.stored.toString("base64"),
          // A long request's session digest (its history as chain hashes), or none.
          digest_z:
            encodeDigest(p, encoded.jsonBytes, opts.digestMinJsonBytes ?? DIGEST_MIN_JSON_BYTES)?.toString("base64") ??
            null,
          payload_bytes: encoded.jsonBytes,
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.total,
          awaits_messages: (p as { otel?: { messages?: unknown } }).otel?.messages === "none",
          received_at: m.receivedAt,
        });
        // Spans are derived from the payload when read; only where each span id lives is written:
        // the ids as the trace row's `span_keys` (migration 0022), found by its GIN index.
        const keys = deriveSpans(traceId, p).flatMap((s) => spanIdKey(s.spanId) ?? []);
        traceRows[traceRows.length - 1].span_keys = keys.length ? keys : null;
      } else {
        const p = m.payload;
        eventRows.push({
          tenant_id: m.tenantId,
          trace_service_id: svc,
          session_pk: sessionPk,
          session_id: p.session_id,
          trace_id: p.trace_id ?? null,
          event_key: m.messageId,
          name: p.name,
          timestamp: p.timestamp,
          severity_number: p.severity_number ?? null,
          attributes: p.attributes ?? {},
          body: p.body ?? null,
          environment: p.environment ?? null,
        });
      }
    }

    const insertTraces = traceRows.length
      ? tx<
          {
            id: string;
            trace_id: string;
            trace_service_id: string;
            session_pk: string;
            start_ms: number;
            end_ms: number;
          }[]
        >`
          insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
            prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at, span_keys, payload_bytes)
          select tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
            prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at, span_keys, payload_bytes
          from json_to_recordset(${tx.json(traceRows.map(({ payload_z: _, digest_z: __, ...row }) => row) as any)}::json) as x(tenant_id uuid, trace_service_id uuid, session_pk uuid, trace_id text,
            session_id text, environment text, provider text, model text, start_time timestamptz, end_time timestamptz,
            prompt_tokens bigint, completion_tokens bigint, total_tokens bigint, awaits_messages boolean, received_at timestamptz, span_keys int8[],
            payload_bytes int)
          order by trace_service_id, trace_id
          on conflict (trace_service_id, trace_id, tenant_id) do nothing
          returning id, trace_id, trace_service_id, session_pk,
            (extract(epoch from start_time) * 1000)::float8 as start_ms, (extract(epoch from end_time) * 1000)::float8 as end_ms`
      : Promise.resolve([]);
    const insertEvents = eventRows.length
      ? tx<{ session_pk: string; at_ms: number }[]>`
          insert into events (tenant_id, trace_service_id, session_pk, session_id, trace_id, event_key, name, timestamp, severity_number, attributes, body, environment)
          select tenant_id, trace_service_id, session_pk, session_id, trace_id, event_key, name, timestamp, severity_number, attributes, body, environment
          from jsonb_to_recordset(${tx.json(eventRows as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, session_pk uuid, session_id text,
            trace_id text, event_key text, name text, timestamp timestamptz, severity_number int, attributes jsonb, body jsonb, environment text)
          order by trace_service_id, event_key
          on conflict (trace_service_id, event_key, tenant_id) do nothing
          returning session_pk, (extract(epoch from timestamp) * 1000)::float8 as at_ms`
      : Promise.resolve([]);
    // now() is the transaction time: every trace inserted here has exactly this ingested_at.
    const [newTraces, newEvents, [batch]] = await Promise.all([
      insertTraces,
      insertEvents,
      traceRows.length
        ? tx<{ micros: string }[]>`select (extract(epoch from now()) * 1000000)::bigint::text as micros`
        : Promise.resolve([] as { micros: string }[]),
    ]);
    const tracePkOf = new Map(newTraces.map((t) => [`${t.trace_service_id}\u0000${t.trace_id}`, t.id]));
    // Each new trace is pending (active) in a narrow row of its own: the trace row is never updated.
    const tenantOfService = new Map(traceRows.map((t) => [t.trace_service_id as string, t.tenant_id as string]));
    const pending = openTraces(
      tx,
      newTraces.map((t) => ({
        trace_pk: t.id,
        tenant_id: tenantOfService.get(t.trace_service_id)!,
        contribution: contributions.get(`${t.trace_service_id}\u0000${t.trace_id}`),
      })),
    );
    // The new traces' payloads, deflated by the app, in a table of their own: written once, never updated.
    const payloads = traceRows.flatMap((t) => {
      const pk = tracePkOf.get(`${t.trace_service_id}\u0000${t.trace_id}`);
      return pk ? [{ trace_pk: pk, tenant_id: t.tenant_id, payload_z: t.payload_z, digest_z: t.digest_z }] : [];
    });
    const payloadsWritten = payloads.length
      ? tx`
        insert into trace_payloads (trace_pk, tenant_id, payload_z, digest_z)
        select trace_pk, tenant_id, decode(payload_z, 'base64'), decode(digest_z, 'base64')
        from json_to_recordset(${tx.json(payloads as any)}::json) as x(trace_pk uuid, tenant_id uuid, payload_z text, digest_z text)
        order by trace_pk`.execute()
      : Promise.resolve([]);
    // Only really-new rows count as activity: they (re)open the session and move its clocks.
    const activity = new Map<string, { first: number; last: number }>();
    const note = (pk: string, from: number, to: number) => {
      const a = activity.get(pk);
      activity.set(pk, a ? { first: Math.min(a.first, from), last: Math.max(a.last, to) } : { first: from, last: to });
    };
    // Instants come back as epoch milliseconds, not as postgres.js Dates: it parses the text
    // form with Date(), which reads year 0050 as 1950 and gives NaN for some valid years.
    for (const t of newTraces) note(t.session_pk, t.start_ms, t.end_ms);
    for (const e of newEvents) note(e.session_pk, e.at_ms, e.at_ms);
    // Locked in id order as maturation locks them; also un-parks a parked session.
    const reopening = reopen(
      tx,
      [...activity].map(([pk, a]) => ({
        pk,
        first: new Date(a.first).toISOString(),
        last: new Date(a.last).toISOString(),
      })),
    );
    // Sessions and traces that only got replayed rows still need their key refreshed when they are
    // active (a crash may have come between an earlier write and its refresh); look those up only.
    const replayedSessions = [...new Set(sessionRows.map((r) => r.id))].filter((id) => !activity.has(id));
    const replayedTraces = traceRows.filter((t) => !tracePkOf.has(`${t.trace_service_id}\u0000${t.trace_id}`));
    // One round trip for the five (pipelined; each runs when issued, in the order written: a
    // postgres.js query starts at execute() or await).
    const [, , updated, active, activeTraces] = await Promise.all([
      pending,
      payloadsWritten,
      reopening,
      replayedSessions.length
        ? tx<
            { id: string }[]
          >`select id from sessions where id = any(${tx.array(replayedSessions)}::uuid[]) and status = 'active'`.execute()
        : Promise.resolve([] as { id: string }[]),
      stillActiveTraces(
        tx,
        replayedTraces.map((t) => ({ s: t.trace_service_id as string, id: t.trace_id as string })),
      ),
    ]);
    return {
      activeSessionPks: [...updated.map((r) => r.id), ...active.map((r) => r.id)],
      activeTracePks: activeTraces.map((r) => r.id),
      traceBatchMicros: newTraces.length ? (batch?.micros ?? null) : null,
    };
  });
}
