import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { HttpError } from "@cellar/shared/errors";
import { loadOtlpSchemas, OtlpDecodeError, type OtlpEncoding } from "@cellar/shared/otlp/decode";
import type { RateReservation } from "@cellar/shared/rate-limit";
import type { BuiltMessage, StoreInput } from "../batch-message.ts";
import { inflateBody, inflatedSizeHint } from "../body.ts";
import type { IngestPipeline } from "../pipeline.ts";
import { type OtlpJobResult, type OtlpSignal, otlpItems } from "./items.ts";

export { otlpServiceFor, type OtlpSignal } from "./items.ts";

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
  /**
   * The pipeline's offload (pipeline.ts, offload/): a large request's messages built on a thread
   * of its own by items.ts `buildOtlp`, or undefined (absent, too small, or the pool cannot take
   * it): built here.
   */
  offloaded?: IngestPipeline["offloaded"];
  /** The pipeline's `storeBuilt` (publish.ts): the offloaded request's messages, after every PubAck. */
  storeBuilt?: (messages: BuiltMessage[]) => Promise<unknown>;
}

/** What an export stored: how many items were refused (partial success) and why, and the RateLimit headers. */
export interface OtlpExportResult {
  rejected: number;
  /** The partial-success message naming the first five reasons, or null when nothing was refused. */
  message: string | null;
  rateHeaders: Record<string, string>;
}

const NOUN: Record<OtlpSignal, string> = { traces: "spans", logs: "log records" };

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
      body: Uint8Array,
      encoding: OtlpEncoding,
      /** Set when `body` is a gzip body as sent (the HTTP door): inflated within this bound, on the thread or here. */
      gzip?: { maxBodyBytes: number },
    ): Promise<OtlpExportResult> {
      let rateHeaders: Record<string, string> = {};
      const yieldTurn = () => deps.turn(key.tenantId);
      const otlpKey = { tenantId: key.tenantId, kind: key.kind, serviceName: key.serviceName };
      let rejected: number;
      let reasons: string[];
      try {
        // Refused here, before decoding, when another request of the credential was counted larger
        // since this one was admitted (RateReservation.confirm): a herd decodes one body.
        await admission.confirm();
        // A large request is built into its messages on an offload thread (offload/pool.ts), in
        // this tenant's turn for one; the answer is what the loop would have given (tasks.ts).
        // A gzip body by the size its trailer states (body.ts inflatedSizeHint).
        const size = gzip ? inflatedSizeHint({ bytes: body, gzip: true }) : body.length;
        const built = (await deps.offloaded?.(key.tenantId, "otlp", size, {
          key: otlpKey,
          signal,
          encoding,
          bytes: body,
          gzip,
        })) as OtlpJobResult | undefined;
        if (built) {
          if (!built.built && "httpError" in built)
            throw new HttpError(built.httpError.status, built.httpError.message);
          if (!built.built) throw new OtlpDecodeError(built.decodeError);
          rateHeaders = admission.settle(built.count, NOUN[signal]);
          if (built.messages.length) await deps.storeBuilt!(built.messages);
          return exportResult(signal, built.rejected, built.reasons, rateHeaders);
        }
        let bytes = body;
        if (gzip) {
          bytes = await inflateBody({ bytes: body, gzip: true }, gzip.maxBodyBytes);
          await admission.confirm(); // as after reading an identity body
        }
        // The request read, the rest runs in this tenant's turns: behind at most one slice of each
        // other tenant's work, not behind every request that arrived with it.
        await yieldTurn();
        // Decoded, mapped and checked ITEMS_PER_TURN spans or records at a time: a 500-span body is
        // otherwise one turn of 5-50 ms that every other tenant's request waits behind (issue 41).
        const items = await otlpItems(otlpKey, signal, bytes, encoding, yieldTurn, (count) => {
          rateHeaders = admission.settle(count, NOUN[signal]);
        });
        rejected = items.rejected;
        reasons = items.reasons;
        // One INGEST message for the request's items (or the few the maximum payload forces), every
        // one stored or the request fails: a retry builds the same messages (same items, same ids),
        // deduplicated by JetStream, and any other copy is a no-op by the items' natural keys.
        if (items.inputs.length) await deps.storeAll(items.inputs);
      } finally {
        admission.settleUncounted(); // undecodable: no-op once settled
      }
      return exportResult(signal, rejected, reasons, rateHeaders);
    },
  };
}

function exportResult(
  signal: OtlpSignal,
  rejected: number,
  reasons: string[],
  rateHeaders: Record<string, string>,
): OtlpExportResult {
  const message = rejected ? `${rejected} ${NOUN[signal]} refused: ${reasons.join("; ")}` : null;
  return { rejected, message, rateHeaders };
}

export type OtlpHandling = ReturnType<typeof createOtlpHandling>;
