import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import type { DeadLetterInfo } from "@cellar/shared/nats/consume";
import { DL } from "@cellar/shared/nats/dead-letters";

/**
 * Counts an INGEST dead letter in the ledger at its message's service and receivedAt minute, so
 * it meets its `accepted` count; a body that does not parse counts for its tenant at this minute.
 * A batch dead-lettered whole counts each of its items (an item set aside alone is a message of
 * its own: docs/analyse-once.md).
 * A replayed message (DL.replayOf) counts `replayed` when it is settled: here, or stored.
 */
export function countDeadLetter(ledger: LedgerCounter, info: DeadLetterInfo): void {
  let body: { tenantId?: unknown; serviceName?: unknown; receivedAt?: unknown; kind?: unknown; items?: unknown } = {};
  try {
    if (info.data) body = JSON.parse(new TextDecoder().decode(info.data)) ?? {};
  } catch {}
  const tenant = typeof body.tenantId === "string" ? body.tenantId : info.tenant;
  if (!tenant) return;
  const at = typeof body.receivedAt === "string" ? Date.parse(body.receivedAt) : Number.NaN;
  const minute = Number.isFinite(at) ? at : undefined;
  const replayed = Boolean(info.headers?.get(DL.replayOf));
  // A batch set aside whole (its envelope broken): each of its items, under its service.
  const services =
    body.kind === "batch" && Array.isArray(body.items)
      ? body.items.map((i: { serviceName?: unknown } | null) =>
          typeof i?.serviceName === "string" ? i.serviceName : "",
        )
      : [typeof body.serviceName === "string" ? body.serviceName : ""];
  for (const service of services) {
    ledger.add(tenant, service, "dead_lettered", "", 1, minute);
    if (replayed) ledger.add(tenant, service, "replayed", "", 1, minute);
  }
}
