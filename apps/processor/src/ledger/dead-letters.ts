import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import type { DeadLetterInfo } from "@cellar/shared/nats/consume";
import { DL } from "@cellar/shared/nats/dead-letters";

/**
 * Counts an INGEST dead letter in the ledger at its message's service and receivedAt minute, so
 * it meets its `accepted` count; a body that does not parse counts for its tenant at this minute.
 * A replayed message (DL.replayOf) counts `replayed` when it is settled: here, or stored.
 */
export function countDeadLetter(ledger: LedgerCounter, info: DeadLetterInfo): void {
  let body: { tenantId?: unknown; serviceName?: unknown; receivedAt?: unknown } = {};
  try {
    if (info.data) body = JSON.parse(new TextDecoder().decode(info.data)) ?? {};
  } catch {}
  const tenant = typeof body.tenantId === "string" ? body.tenantId : info.tenant;
  if (!tenant) return;
  const service = typeof body.serviceName === "string" ? body.serviceName : "";
  const at = typeof body.receivedAt === "string" ? Date.parse(body.receivedAt) : Number.NaN;
  const minute = Number.isFinite(at) ? at : undefined;
  ledger.add(tenant, service, "dead_lettered", "", 1, minute);
  if (info.headers?.get(DL.replayOf)) ledger.add(tenant, service, "replayed", "", 1, minute);
}
