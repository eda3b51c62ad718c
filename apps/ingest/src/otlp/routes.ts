import { HttpError } from "@cellar/shared/errors";
import type { Logger } from "@cellar/shared/logger";
import { encodeExportResponse, encodeStatus, OtlpDecodeError, type OtlpEncoding } from "@cellar/shared/otlp/decode";
import type { RateReservation } from "@cellar/shared/rate-limit";
import type { Authenticated } from "../credentials.ts";
import type { StoreInput } from "../publish.ts";
import { readWireBody, type WireBody } from "../body.ts";
import { createOtlpHandling, type OtlpHandlingDeps, type OtlpSignal } from "./handle.ts";

export type { OtlpSignal } from "./handle.ts";

/**
 * POST /v1/traces and /v1/logs (OTLP/HTTP 1.x, docs/otlp.md). Same credentials, rate limit (per
 * span or log record, refused before the body is read when the bucket cannot hold the request:
 * handle.ts), body limit and durability rule as /raw/*: the answer is 200 only after JetStream
 * stored the request's accepted items (one INGEST message, as /raw/batch: issue 36). Failures answer a google.rpc.Status in the
 * request's encoding (the JSON one also carries the contract's `error` field).
 */
export interface OtlpDeps {
  /** `client`: the peer address, for the pre-authentication limiter (credentials.ts). */
  authenticate: (request: Request, client?: string) => Promise<Authenticated>;
  reserveRateTokens: (keyId: string, door: string) => RateReservation;
  /** A request's accepted items in one INGEST message (handle.ts); after every PubAck. */
  storeAll: (inputs: StoreInput[]) => Promise<unknown>;
  /** The tenant's turn on the event loop (pipeline.ts). */
  turn: (tenantId: string) => Promise<void>;
  /** A large request built on an offload thread, and its messages stored (handle.ts). */
  offloaded?: OtlpHandlingDeps["offloaded"];
  storeBuilt?: OtlpHandlingDeps["storeBuilt"];
  /** The ledger's count of spans or log records refused one by one (docs/ledger.md). */
  refuseItems?: (n: number) => void;
  maxBodyBytes: number;
  logger: Logger;
}

const PROTOBUF = /^application\/x-protobuf\s*(;.*)?$/i;
const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
/** gRPC codes the OTLP spec pairs with HTTP statuses in its Status bodies. */
export const GRPC_CODE: Record<number, number> = {
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  405: 12,
  413: 8,
  415: 3,
  429: 8,
  503: 14,
};

export function encodingOf(request: Request): OtlpEncoding | null {
  const type = (request.headers.get("content-type") ?? "").trim();
  if (PROTOBUF.test(type)) return "protobuf";
  if (JSON_TYPE.test(type)) return "json";
  return null;
}

export function createOtlpIngest(deps: OtlpDeps) {
  const otlp = createOtlpHandling(deps);
  function failure(encoding: OtlpEncoding, status: number, message: string, headers: Record<string, string>): Response {
    const body =
      encoding === "json"
        ? JSON.stringify({ code: GRPC_CODE[status] ?? 2, message, error: message })
        : encodeStatus("protobuf", GRPC_CODE[status] ?? 2, message);
    return new Response(body as BodyInit, {
      status,
      headers: { ...headers, "content-type": encoding === "json" ? "application/json" : "application/x-protobuf" },
    });
  }

  return async function ingestOtlp(
    signal: OtlpSignal,
    request: Request,
    requestId: string,
    client?: string,
  ): Promise<Response> {
    let headers: Record<string, string> = { "x-request-id": requestId };
    // Before authentication the encoding decides only how an error is written.
    const encoding = encodingOf(request);
    try {
      const { key, cors } = await deps.authenticate(request, client);
      headers = { ...headers, ...cors };
      if (!encoding) throw new HttpError(415, "content-type must be application/x-protobuf or application/json");
      // Before the body is read: a request the bucket cannot hold costs nothing more to refuse.
      const admission = otlp.admit(key, signal);
      headers = { ...headers, ...admission.headers };
      let wire: WireBody;
      try {
        // Confirmed before the body is read too: a herd's others wait for the door's probe here.
        await admission.confirm();
        wire = await readWireBody(request, deps.maxBodyBytes);
      } catch (err) {
        admission.settleUncounted();
        throw err;
      }
      // A gzip body is inflated by the handling (handle.ts), after it confirms the admission: on
      // the offload thread when large, else here as before.
      const gzip = wire.gzip && wire.bytes.byteLength > 0 ? { maxBodyBytes: deps.maxBodyBytes } : undefined;
      const result = await otlp.exportRequest(admission, key, signal, wire.bytes, encoding, gzip);
      headers = { ...headers, ...result.rateHeaders };
      deps.refuseItems?.(result.rejected);
      const body = encodeExportResponse(signal, encoding, result.rejected, result.message);
      return new Response(body as BodyInit, {
        status: 200,
        headers: { ...headers, "content-type": encoding === "json" ? "application/json" : "application/x-protobuf" },
      });
    } catch (err) {
      if (err instanceof OtlpDecodeError) return failure(encoding ?? "json", 400, err.message, headers);
      if (!(err instanceof HttpError)) throw err;
      return failure(encoding ?? "json", err.status, err.message, { ...headers, ...err.headers });
    }
  };
}
