import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { ingestMessageProblem } from "@cellar/shared/ingest-rules";
import { decodeLogsInSteps, decodeTracesInSteps, loadOtlpSchemas, type OtlpEncoding } from "@cellar/shared/otlp/decode";
import { type MapResult, mapLogsInSteps, mapSpansInSteps } from "@cellar/shared/otlp/map";
import { IDENTIFIER_PATTERN, LIMITS } from "@cellar/shared/payloads";
import type { RateReservation } from "@cellar/shared/rate-limit";
import { runInTurns, sliceClock } from "@cellar/shared/steps";
import { ITEMS_PER_TURN } from "../pipeline.ts";
import type { StoreInput } from "../publish.ts";

/**
 * OTLP handling shared by every OTLP door (HTTP: routes.ts; gRPC: otlp/grpc/): admission before
 * the request is read, then decode, charge per span or log record, map, check and store. A door
 * only authenticates, reads its transport and writes the answer (docs/otlp.md).
 */
export interface OtlpHandlingDeps {
  /** The pipeline's limiter (pipeline.ts): reserves before reading, settled with the real count. */
  reserveRateTokens: (keyId: string, door: string) => RateReservation;
  /**
   * The pipeline's `storeAll` (publish.ts): a request's accepted items in one INGEST message (split
   * in order only past the stream's maximum payload), resolved after every PubAck (issue 36).
   */
  storeAll: (inputs: StoreInput[]) => Promise<unknown>;
  /** The tenant's turn on the event loop (pipeline.ts, shared/fair-turns.ts), before and between slices. */
  turn: (tenantId: string) => Promise<void>;
}

export type OtlpSignal = "traces" | "logs";

/** What an export stored: how many items were refused (partial success) and why, and the RateLimit headers. */
export interface OtlpExportResult {
  rejected: number;
  /** The partial-success message naming the first five reasons, or null when nothing was refused. */
  message: string | null;
  rateHeaders: Record<string, string>;
}

const IDENT = new RegExp(IDENTIFIER_PATTERN);
const NOUN: Record<OtlpSignal, string> = { traces: "spans", logs: "log records" };

/** The service an item is stored under: a DSN names its own; otherwise the resource's service.name. */
export function otlpServiceFor(key: ResolvedKey, given: string | null): string | null {
  // A DSN names its service; the SDK's resource (often "unknown_service:node") cannot override it.
  if (key.kind === "dsn-server" || key.kind === "dsn-client") return key.serviceName!;
  if (!given || given.length > LIMITS.serviceName || !IDENT.test(given)) return null;
  return given;
}

export function createOtlpHandling(deps: OtlpHandlingDeps) {
  // Parsed now, at start: on the first protobuf request it would hold every other one ~120 ms.
  loadOtlpSchemas();
  return {
    /**
     * Call before reading the request (its body, or its gRPC message): reserves the credential's
     * usual request size (shared/rate-limit.ts), or throws the 429 HttpError with Retry-After at
     * once, so a refusal costs the same whatever the request carries. Settled by `exportRequest`.
     */
    admit(key: ResolvedKey, signal: OtlpSignal): RateReservation {
      return deps.reserveRateTokens(key.id, `otlp-${signal}`);
    },

    /**
     * Decodes the request (OtlpDecodeError: 400), charges one token per span or log record
     * (413 past the burst, 429 when the bucket would owe more than a burst), maps, checks each item
     * with the processor's own rules, and resolves once JetStream stored every accepted one
     * (throws 503 otherwise: nothing is answered as stored, a retry is deduplicated by message id).
     */
    async exportRequest(
      admission: RateReservation,
      key: ResolvedKey,
      signal: OtlpSignal,
      bytes: Uint8Array,
      encoding: OtlpEncoding,
    ): Promise<OtlpExportResult> {
      let mapped: MapResult<Record<string, unknown>>;
      let rateHeaders: Record<string, string>;
      const yieldTurn = () => deps.turn(key.tenantId);
      try {
        // Refused here, before decoding, when another request of the credential was counted larger
        // since this one was admitted (RateReservation.confirm): a herd decodes one body.
        await admission.confirm();
        // The request read, the rest runs in this tenant's turns: behind at most one slice of each
        // other tenant's work, not behind every request that arrived with it.
        await yieldTurn();
        // Decoded and mapped ITEMS_PER_TURN spans or records at a time: a 500-span body is
        // otherwise one turn of 5-50 ms that every other tenant's request waits behind (issue 41).
        if (signal === "traces") {
          const spans = await runInTurns(decodeTracesInSteps(bytes, encoding), ITEMS_PER_TURN, yieldTurn);
          rateHeaders = admission.settle(spans.length, NOUN.traces);
          mapped = (await runInTurns(mapSpansInSteps(spans), ITEMS_PER_TURN, yieldTurn)) as MapResult<any>;
        } else {
          const records = await runInTurns(decodeLogsInSteps(bytes, encoding), ITEMS_PER_TURN, yieldTurn);
          rateHeaders = admission.settle(records.length, NOUN.logs);
          mapped = (await runInTurns(mapLogsInSteps(records), ITEMS_PER_TURN, yieldTurn)) as MapResult<any>;
        }
      } finally {
        admission.settleUncounted(); // undecodable: no-op once settled
      }
      const inputs = await storable(key, mapped, yieldTurn);
      // One INGEST message for the request's items (or the few the maximum payload forces), every
      // one stored or the request fails: a retry builds the same messages (same items, same ids),
      // deduplicated by JetStream, and any other copy is a no-op by the items' natural keys.
      if (inputs.length) await deps.storeAll(inputs);
      const message = mapped.rejected
        ? `${mapped.rejected} ${NOUN[signal]} refused: ${mapped.reasons.join("; ")}`
        : null;
      return { rejected: mapped.rejected, message, rateHeaders };
    },
  };
}

export type OtlpHandling = ReturnType<typeof createOtlpHandling>;

/** The mapped items that pass the processor's rules, as messages to store; the rest counted as rejected. */
async function storable(
  key: ResolvedKey,
  mapped: MapResult<Record<string, unknown>>,
  yieldTurn: () => Promise<void>,
): Promise<StoreInput[]> {
  const inputs: StoreInput[] = [];
  const due = sliceClock(ITEMS_PER_TURN);
  for (const item of mapped.accepted) {
    // Other requests run between chunks: a 500-span request is not one long turn (pipeline.ts).
    if (due()) await yieldTurn();
    const serviceName = otlpServiceFor(key, item.serviceName);
    const isTrace = "request" in item.payload;
    // Exactly the check the processor decodes INGEST messages with (shared/ingest-rules.ts):
    // what is answered as stored can always be stored. It normalises timestamps in place.
    const problem = !serviceName
      ? "resource attribute service.name is required (a non-blank string of at most 200 characters)"
      : ingestMessageProblem({
          kind: isTrace ? "trace" : "event",
          messageId: "0",
          tenantId: key.tenantId,
          serviceName,
          receivedAt: new Date().toISOString(),
          payload: item.payload,
        });
    if (problem) {
      mapped.rejected++;
      if (mapped.reasons.length < 5) mapped.reasons.push(problem);
      continue;
    }
    // The mapping is deterministic (attribute order is the request's, the same in protobuf and
    // JSON): its JSON is the body the message id hashes, so a retry gets the same ids.
    const payloadText = JSON.stringify(item.payload);
    inputs.push({
      kind: isTrace ? "trace" : "event",
      tenantId: key.tenantId,
      serviceName: serviceName!,
      payload: item.payload as any,
      // The id hashes "otlp\n" + the payload's JSON, without that string built (publish.ts).
      idPrefix: "otlp\n",
      idSource: payloadText,
      payloadText,
    });
  }
  return inputs;
}
