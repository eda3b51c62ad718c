import type postgres from "postgres";
import type { Delivery } from "@cellar/shared/nats/consume";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import { DL } from "@cellar/shared/nats/dead-letters";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../ingest/writer.ts";
import type { EntityKind } from "../maturation/activity.ts";
import type { ActivityCoalescer } from "../maturation/coalesce.ts";

/**
 * The INGEST consumer: writes a batch of decoded messages, then refreshes their activity keys
 * (after the write: an expired key then means every span before it is in Postgres). Throws on
 * failure; the consume runtime isolates the culprit and retries or dead-letters it (shared/nats).
 */
export function ingestHandler(sql: postgres.Sql, coalescer: ActivityCoalescer, ledger?: LedgerCounter) {
  return async (items: Delivery<IngestMessage>[]): Promise<void> => {
    const written = await writeIngestBatch(
      sql,
      items.map((d) => d.value),
    );
    await coalescer.refresh([
      ...written.activeSessionPks.map((pk) => ({ kind: "session" as EntityKind, pk })),
      ...written.activeTracePks.map((pk) => ({ kind: "trace" as EntityKind, pk })),
      ...(written.traceBatchMicros ? [{ kind: "batch" as EntityKind, pk: written.traceBatchMicros }] : []),
    ]);
    // Stored once the batch succeeded (a failed refresh retries it: counted then). docs/ledger.md.
    for (const { value: m, msg } of items) {
      const at = Date.parse(m.receivedAt);
      ledger?.add(m.tenantId, m.serviceName, "stored", m.kind, 1, at);
      if (msg.headers?.get(DL.replayOf)) ledger?.add(m.tenantId, m.serviceName, "replayed", "", 1, at);
    }
  };
}
