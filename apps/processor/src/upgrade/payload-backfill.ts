import type postgres from "postgres";
import { encodePayload, usageTotals } from "@cellar/shared/db/payload-codec";
import type { Logger } from "@cellar/shared/logger";

/**
 * Moves trace rows written before migration 0015 to the compressed shape, online: small batches
 * walked in id order over `traces_jsonb_payload_idx` (only the rows still to move: a finished
 * backfill costs nothing at the next start), each a short transaction that skips rows
 * another transaction holds (a maturation; the next pass takes them). Reads take either shape
 * (shared/db/payload-codec.ts), so answers are the same before, during and after. Returns the
 * rows moved by this pass.
 */
export async function backfillPayloads(
  sql: postgres.Sql,
  o: { batch?: number; pauseMs?: number; stopped?: () => boolean } = {},
): Promise<number> {
  const batch = o.batch ?? 200;
  let after = "00000000-0000-0000-0000-000000000000";
  let moved = 0;
  for (;;) {
    if (o.stopped?.()) return moved;
    const { n, last } = await sql.begin(async (tx) => {
      const rows = await tx<{ id: string; tenant_id: string; payload: Record<string, unknown> }[]>`
        select id, tenant_id, payload from traces where id > ${after} and payload is not null
        order by id limit ${batch} for update skip locked`;
      if (rows.length === 0) return { n: 0, last: null };
      const moved = rows.map((r) => {
        const usage = usageTotals(r.payload);
        return {
          id: r.id,
          tenant_id: r.tenant_id,
          z: encodePayload(r.payload).toString("base64"),
          prompt: usage.prompt,
          completion: usage.completion,
          total: usage.total,
          awaits: (r.payload as { otel?: { messages?: unknown } }).otel?.messages === "none",
        };
      });
      await tx`
        with x as (select * from json_to_recordset(${JSON.stringify(moved)}::text::json)
            as x(id uuid, tenant_id uuid, z text, prompt bigint, completion bigint, total bigint, awaits boolean)),
          stored as (insert into trace_payloads (trace_pk, tenant_id, payload_z) select id, tenant_id, decode(z, 'base64') from x)
        update traces t set payload = null, prompt_tokens = x.prompt, completion_tokens = x.completion, total_tokens = x.total,
          awaits_messages = x.awaits
        from x where t.id = x.id`;
      return { n: rows.length, last: rows[rows.length - 1].id };
    });
    if (!last) return moved;
    moved += n;
    after = last;
    if (o.pauseMs) await new Promise((r) => setTimeout(r, o.pauseMs));
  }
}

/**
 * The processor runs the backfill once at start, in the background, with a pause between batches
 * so ingest keeps its share of Postgres; passes repeat until one finds nothing (rows skipped
 * while locked are taken by the next).
 */
export function startPayloadBackfill(sql: postgres.Sql, logger: Logger) {
  let stopped = false;
  const done = (async () => {
    for (let pass = 1; !stopped; pass++) {
      const moved = await backfillPayloads(sql, { pauseMs: 20, stopped: () => stopped });
      if (moved === 0) return;
      logger.info("trace payloads moved to the compressed shape (migration 0015)", { pass, moved });
    }
  })().catch((err) => logger.error("payload backfill failed; it resumes at the next start", { err }));
  return {
    async stop() {
      stopped = true;
      await done;
    },
  };
}
