import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import { type IngestDoor, readLedgerReport, refusalReasonFor } from "@cellar/shared/ledger/model";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import type { IngestPipeline } from "./pipeline.ts";
import type { BuiltMessage, StoreInput } from "./publish.ts";

/** A door's pipeline for one request, counting what it accepts and refuses (docs/ledger.md). */
export interface CountedRequest {
  pipeline: IngestPipeline;
  /** Counts a refused answer (status >= 400) once, for the credential's tenant; returns it. */
  settle(response: Response): Response;
}

/**
 * Wraps the pipeline for one request of `door`: `accepted` is counted per item JetStream stored
 * for the first time (a retry's duplicate is not), at the minute of its receivedAt; a refusal
 * once the credential is known (an unauthenticated request belongs to no tenant). Counting is a
 * map update; the counter writes in batches. Without a ledger the pipeline is returned as is.
 */
export function countedRequest(pipeline: IngestPipeline, door: IngestDoor): CountedRequest {
  const ledger = pipeline.ledger;
  if (!ledger) return { pipeline, settle: (r) => r };
  let key: ResolvedKey | undefined;
  const doorCount = countedDoor(pipeline, door);
  const counted: IngestPipeline = {
    ...pipeline,
    async authenticate(request, client) {
      const authenticated = await pipeline.authenticate(request, client);
      key = authenticated.key;
      return authenticated;
    },
    store: doorCount.store,
    storeAll: doorCount.storeAll ?? pipeline.storeAll,
    storeBuilt: doorCount.storeBuilt ?? pipeline.storeBuilt,
    refuseItems(n, serviceName) {
      if (key) doorCount.refused(key, 400, n, serviceName);
    },
    sdkReport(given) {
      if (key) recordSdkReport(ledger, key, given);
    },
  };
  return {
    pipeline: counted,
    settle(response) {
      if (response.status >= 400 && key) doorCount.refused(key, response.status, 1);
      return response;
    },
  };
}

/**
 * A door's counting without a Request (the gRPC listener): its `store` counts `accepted` per item
 * JetStream stored for the first time, at the minute of its receivedAt; `refused` counts `n` items
 * of a credential refused with the HTTP status the door answered (or maps its answer from).
 */
export function countedDoor(
  pipeline: Pick<IngestPipeline, "ledger" | "now" | "store"> & Partial<Pick<IngestPipeline, "storeAll" | "storeBuilt">>,
  door: IngestDoor,
) {
  const ledger = pipeline.ledger;
  const now = pipeline.now ?? (() => new Date());
  const storeAll = pipeline.storeAll;
  const storeBuilt = pipeline.storeBuilt;
  return {
    store: ledger
      ? async (input: StoreInput) => {
          // The publisher stamps receivedAt with the same clock, in the same turn.
          const at = now().getTime();
          input.door = door;
          const stored = await pipeline.store(input);
          if (!stored.duplicate) ledger.add(input.tenantId, input.serviceName, "accepted", door, 1, at);
          return stored;
        }
      : pipeline.store,
    /** A request's items in one message (or a few): each message JetStream stored for the first time counts its items. */
    storeAll:
      ledger && storeAll
        ? async (inputs: StoreInput[]) => {
            const at = now().getTime();
            for (const input of inputs) input.door = door;
            const stored = await storeAll(inputs);
            for (const message of stored) {
              if (message.duplicate) continue;
              for (const input of message.inputs)
                ledger.add(input.tenantId, input.serviceName, "accepted", door, 1, at);
            }
            return stored;
          }
        : storeAll,
    /** Messages an offload thread built: each stored for the first time counts its items per service. */
    storeBuilt:
      ledger && storeBuilt
        ? async (messages: BuiltMessage[]) => {
            // Counted at the minute the messages say they were received (stamped when the job
            // was handed to the thread, before this), as the recount and the processor count
            // them: a request whose build crossed a minute was counted a minute later, and that
            // minute found accepted items neither stored nor in flight (bench/flood.ts, issue 41).
            const received = Date.parse(messages[0]?.receivedAt ?? "");
            const at = Number.isFinite(received) ? received : now().getTime();
            // The door's header on each message: the reconciliation recounts `accepted` by it.
            const stored = await storeBuilt(messages, door);
            for (const message of stored) {
              if (message.duplicate) continue;
              for (const [service, n] of Object.entries(message.services))
                ledger.add(messages[0].tenantId, service, "accepted", door, n, at);
            }
            return stored;
          }
        : storeBuilt,
    refused(key: ResolvedKey, status: number, n: number, serviceName?: string): void {
      if (ledger && n > 0)
        ledger.add(key.tenantId, serviceName ?? key.serviceName ?? "", "refused", refusalReasonFor(status), n);
    },
  };
}

/** A batch envelope's `ledger` report for the credential's service; anything malformed is ignored. */
function recordSdkReport(ledger: LedgerCounter, key: ResolvedKey, given: unknown): void {
  const report = readLedgerReport(given);
  if (!report) return;
  const dsn = key.kind === "dsn-server" || key.kind === "dsn-client";
  // A DSN names its service (a report naming another is ignored); a telemetry key's report names one.
  const service = dsn ? key.serviceName : report.service_name;
  if (!service || (dsn && report.service_name !== undefined && report.service_name !== service)) return;
  ledger.sdkReport(key.tenantId, service, report);
}

/** How many object keys a valid report holds (the batch door's duplicate-key count), else null. */
export function ledgerReportKeys(given: unknown): number | null {
  const report = readLedgerReport(given);
  return report ? Object.keys(report).length + Object.keys(report.counts).length : null;
}
