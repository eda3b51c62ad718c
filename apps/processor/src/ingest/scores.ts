import type postgres from "postgres";
import type { IngestScoreMessage } from "@cellar/shared/payloads";
import { scoreValueColumns } from "@cellar/shared/scores/values";
import { upsertCounts } from "@cellar/shared/ledger/upsert";
import { resolveTraceServices, serviceKey } from "./services.ts";
import { type Counted, type LedgerWrite, rowTimes, settleAfterLookup, storedCounts } from "./stored.ts";

/**
 * The score kind's writer: the scores of an INGEST batch in their own transaction, before the
 * batch's traces and events (writer.ts). By natural key and idempotency key, `ON CONFLICT DO
 * NOTHING`: a replayed or retried score is stored once, and a score that names a session or
 * trace not written yet is kept (the reads join by session id / trace id). Touches no session:
 * a score is not activity and neither opens nor delays a maturation. With `ledger`, what it
 * stored is counted in the same transaction (docs/ledger.md); a row already there is this copy's
 * when it keeps this copy's receivedAt (its created_at), else another copy's.
 */
export async function writeScores(
  sql: postgres.Sql,
  scores: IngestScoreMessage[],
  ledger?: LedgerWrite,
): Promise<Counted> {
  if (scores.length === 0) return [];
  return sql.begin(async (tx) => {
    const services = await resolveTraceServices(tx, scores);
    const rows = scores.map((m) => {
      const p = m.payload;
      return {
        tenant_id: m.tenantId,
        trace_service_id: services.get(serviceKey(m.tenantId, m.serviceName))!,
        target: p.session_id !== undefined ? "session" : "trace",
        session_id: p.session_id ?? null,
        trace_id: p.trace_id ?? null,
        name: p.name,
        ...scoreValueColumns(p.value),
        comment: p.comment ?? null,
        source: p.source,
        idempotency_key: p.idempotency_key,
        environment: p.environment ?? null,
        created_at: m.receivedAt,
      };
    });
    const inserted = await tx<{ trace_service_id: string; idempotency_key: string }[]>`
      insert into scores (tenant_id, trace_service_id, target, session_id, trace_id, name, data_type, value, label, comment, source, idempotency_key, environment, created_at)
      select tenant_id, trace_service_id, target, session_id, trace_id, name, data_type, value, label, comment, source, idempotency_key, environment, created_at
      from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, target text, session_id text, trace_id text,
        name text, data_type text, value float8, label text, comment text, source text, idempotency_key text, environment text, created_at timestamptz)
      order by trace_service_id, idempotency_key
      on conflict (trace_service_id, idempotency_key, tenant_id) do nothing
      returning trace_service_id, idempotency_key`;
    if (!ledger) return [];
    const keyOf = (r: { trace_service_id: string; idempotency_key: string }) =>
      `${r.trace_service_id}\u0000${r.idempotency_key}`;
    const settled = await settleAfterLookup(
      rows.map((r) => ({ key: keyOf(r), receivedMs: Date.parse(r.created_at) })),
      new Set(inserted.map(keyOf)),
      (rowMs, itemMs) => rowMs === itemMs,
      (there) =>
        rowTimes(
          tx,
          { table: "scores", key: "idempotency_key", at: "created_at" },
          there.map((i) => ({
            service: rows[i].trace_service_id,
            key: rows[i].idempotency_key,
            tenant: rows[i].tenant_id,
          })),
        ),
    );
    const { rows: counts, counted } = storedCounts(
      scores.map((message, i) => ({ message, settled: settled[i] })),
      ledger,
    );
    if (counts.length) await upsertCounts(tx, counts);
    return counted;
  });
}
