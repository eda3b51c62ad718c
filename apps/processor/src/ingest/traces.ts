import { encodePayloadSized, usageTotals } from "@cellar/shared/db/payload-codec";
import { openTraces, stillActiveTraces } from "@cellar/shared/maturation/state";
import { encodeTraceContribution } from "../analysis/contribution.ts";
import { DIGEST_MIN_JSON_BYTES, encodeDigest } from "../analysis/digest.ts";
import type { KindInsert, MessageOf, Placed, Tx, WriteOptions } from "./kind-types.ts";
import { deriveSpans, spanIdKey, traceIdFor } from "./spans.ts";
import { rowTimes, settleAfterLookup } from "./stored.ts";

type TraceMessage = MessageOf<"trace">;

/** A trace's row, with its payload (deflated, base64) and digest beside it for the payload row. */
type TraceRow = Record<string, unknown> & {
  tenant_id: string;
  trace_service_id: string;
  trace_id: string;
  payload_z: string;
  digest_z: string | null;
};

/** The trace row of a message, and what it contributes to its own analysis (docs/analyse-once.md). */
function traceRowOf({ message: m, servicePk, sessionPk }: Placed<TraceMessage>, opts: WriteOptions) {
  const p = m.payload;
  const traceId = traceIdFor(p, m.messageId);
  const usage = usageTotals(p);
  // Deflated by the app, not parsed and pglz-compressed by Postgres (shared/db/payload-codec.ts).
  const encoded = encodePayloadSized(p);
  // Spans are derived from the payload when read; only where each span id lives is written:
  // the ids as the trace row's `span_keys` (migration 0022), found by its GIN index.
  const keys = deriveSpans(traceId, p).flatMap((s) => spanIdKey(s.spanId) ?? []);
  const row: TraceRow = {
    tenant_id: m.tenantId,
    trace_service_id: servicePk,
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
      encodeDigest(p, encoded.jsonBytes, opts.digestMinJsonBytes ?? DIGEST_MIN_JSON_BYTES)?.toString("base64") ?? null,
    payload_bytes: encoded.jsonBytes,
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.total,
    awaits_messages: (p as { otel?: { messages?: unknown } }).otel?.messages === "none",
    received_at: m.receivedAt,
    span_keys: keys.length ? keys : null,
  };
  // Taken now while the payload is parsed: trace maturation reads it instead of the payload.
  return { row, contribution: encodeTraceContribution(p) };
}

const keyOf = (serviceId: string, traceId: string) => `${serviceId}\u0000${traceId}`;

/**
 * The trace kind's writer: the trace rows (ON CONFLICT DO NOTHING by service and trace id), then
 * for the really-new ones their pending row (with the contribution) and their payload row; the
 * replayed ones still pending are looked up so their keys get refreshed.
 */
export async function insertTraces(tx: Tx, placed: Placed<TraceMessage>[], opts: WriteOptions): Promise<KindInsert> {
  const rows: TraceRow[] = [];
  const contributions = new Map<string, string>();
  for (const p of placed) {
    const { row, contribution } = traceRowOf(p, opts);
    rows.push(row);
    contributions.set(keyOf(row.trace_service_id, row.trace_id), contribution);
  }
  const inserted = await tx<
    { id: string; trace_id: string; trace_service_id: string; session_pk: string; start_ms: number; end_ms: number }[]
  >`
    insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
      prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at, span_keys, payload_bytes)
    select tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
      prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at, span_keys, payload_bytes
    from json_to_recordset(${tx.json(rows.map(({ payload_z: _, digest_z: __, ...row }) => row) as any)}::json) as x(tenant_id uuid, trace_service_id uuid, session_pk uuid, trace_id text,
      session_id text, environment text, provider text, model text, start_time timestamptz, end_time timestamptz,
      prompt_tokens bigint, completion_tokens bigint, total_tokens bigint, awaits_messages boolean, received_at timestamptz, span_keys int8[],
      payload_bytes int)
    order by trace_service_id, trace_id
    on conflict (trace_service_id, trace_id, tenant_id) do nothing
    returning id, trace_id, trace_service_id, session_pk,
      (extract(epoch from start_time) * 1000)::float8 as start_ms, (extract(epoch from end_time) * 1000)::float8 as end_ms`;
  const pkOf = new Map(inserted.map((t) => [keyOf(t.trace_service_id, t.trace_id), t.id]));
  const tenantOfService = new Map(rows.map((t) => [t.trace_service_id, t.tenant_id]));
  return {
    // Instants come back as epoch milliseconds, not as postgres.js Dates: it parses the text
    // form with Date(), which reads year 0050 as 1950 and gives NaN for some valid years.
    activity: inserted.map((t) => ({ sessionPk: t.session_pk, first: t.start_ms, last: t.end_ms })),
    followUp: (tx) =>
      Promise.all([
        // Each new trace is pending (active) in a narrow row of its own: the trace row is never updated.
        openTraces(
          tx,
          inserted.map((t) => ({
            trace_pk: t.id,
            tenant_id: tenantOfService.get(t.trace_service_id)!,
            contribution: contributions.get(keyOf(t.trace_service_id, t.trace_id)),
          })),
        ),
        writePayloads(tx, rows, pkOf),
      ]),
    settled: (tx) => settledTraces(tx, rows, pkOf),
    // Replayed traces still active need their key refreshed (a crash may have come between an
    // earlier write and its refresh).
    stillActive: (tx) =>
      stillActiveTraces(
        tx,
        rows
          .filter((t) => !pkOf.has(keyOf(t.trace_service_id, t.trace_id)))
          .map((t) => ({ s: t.trace_service_id, id: t.trace_id })),
      ),
  };
}

/**
 * What the write did with each trace (stored.ts): a row already there is this copy's when it
 * keeps this copy's receivedAt (a message written again), else another copy's (a duplicate).
 * The lookup runs only when some row was already there.
 */
function settledTraces(tx: Tx, rows: TraceRow[], pkOf: Map<string, string>) {
  const items = rows.map((t) => ({
    key: keyOf(t.trace_service_id, t.trace_id),
    receivedMs: Date.parse(t.received_at as string),
  }));
  const same = (rowMs: number, itemMs: number) => rowMs === itemMs;
  return settleAfterLookup(items, new Set(pkOf.keys()), same, (there) =>
    rowTimes(
      tx,
      { table: "traces", key: "trace_id", at: "received_at" },
      there.map((i) => ({ service: rows[i].trace_service_id, key: rows[i].trace_id, tenant: rows[i].tenant_id })),
    ),
  );
}

/** The new traces' payloads, deflated by the app, in a table of their own: written once, never updated. */
function writePayloads(tx: Tx, rows: TraceRow[], pkOf: Map<string, string>): Promise<unknown> {
  // One payload per new row: a trace twice in one write (two copies) inserted one row, and a
  // second payload for it failed the whole write (split in halves until each copy was alone).
  const written = new Set<string>();
  const payloads = rows.flatMap((t) => {
    const pk = pkOf.get(keyOf(t.trace_service_id, t.trace_id));
    if (!pk || written.has(pk)) return [];
    written.add(pk);
    return [{ trace_pk: pk, tenant_id: t.tenant_id, payload_z: t.payload_z, digest_z: t.digest_z }];
  });
  if (payloads.length === 0) return Promise.resolve([]);
  return tx`
    insert into trace_payloads (trace_pk, tenant_id, payload_z, digest_z)
    select trace_pk, tenant_id, decode(payload_z, 'base64'), decode(digest_z, 'base64')
    from json_to_recordset(${tx.json(payloads as any)}::json) as x(trace_pk uuid, tenant_id uuid, payload_z text, digest_z text)
    order by trace_pk`.execute();
}
