import * as grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import http2, { type ServerHttp2Stream } from "node:http2";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { HttpError } from "@cellar/shared/errors";
import { REQUEST_ID } from "@cellar/shared/http";
import type { Logger } from "@cellar/shared/logger";
import { clientAddress } from "@cellar/shared/ops/client-address";
import { encodeExportResponse, OtlpDecodeError } from "@cellar/shared/otlp/decode";
import type { RateReservation } from "@cellar/shared/rate-limit";
import type { Cidr } from "@cellar/shared/webhooks/address";
import { countedDoor } from "../../ledger.ts";
import type { RefusalPacing } from "../../pacing.ts";
import type { IngestPipeline } from "../../pipeline.ts";
import { createOtlpHandling, type OtlpSignal } from "../handle.ts";
import { GRPC_CODE } from "../routes.ts";
import { statusWithRetryInfo } from "./status.ts";

/**
 * OTLP/gRPC (docs/otlp.md, "OTLP/gRPC"): `TraceService/Export` and `LogsService/Export` on their
 * own port, with the OTLP handling of /v1/traces and /v1/logs (otlp/handle.ts: admission, charging
 * per span or log record, decoding, mapping, checks, and success only after JetStream stored it)
 * over the same pipeline (one authenticator, rate limit and publisher for both doors). Like the
 * HTTP door, a call is authenticated and admitted from its metadata, before its message is read:
 * an interceptor holds the stream paused until then, so a refusal costs the same whatever the
 * message carries. Only the envelope is gRPC's: the token comes from the `authorization` metadata
 * and outcomes are gRPC statuses (`statusOf`).
 *
 * @grpc/grpc-js (the OpenTelemetry exporters' own gRPC stack) serves it over `node:http2`; it runs
 * unchanged under Bun and Deno.
 */
export interface OtlpGrpcDeps {
  pipeline: Pick<
    IngestPipeline,
    "authenticate" | "reserveRateTokens" | "store" | "storeAll" | "turn" | "ledger" | "now"
  > &
    Partial<Pick<IngestPipeline, "storeBuilt" | "offloaded">>;
  /** INGEST_MAX_BODY_BYTES: a larger message is RESOURCE_EXHAUSTED from its length prefix. */
  maxMessageBytes: number;
  logger: Logger;
  /** TRUSTED_PROXIES: behind one, the client address comes from `x-forwarded-for` metadata. */
  trustedProxies?: Cidr[];
  /**
   * Each call's outcome as the HTTP door would have answered it (200, 400, 401, 413, 429, 503;
   * 499 when the client went away), its gRPC method path and its duration: main.ts records it as
   * an HTTP request, so /metrics shows both doors the same way.
   */
  observe?: (path: string, status: number, seconds: number) => void;
  /** PEM certificate chain and key: TLS on the listener; absent, plaintext (h2c). */
  tls?: { cert: Buffer; key: Buffer };
  /** The HTTP door's pacing of 429s (pacing.ts): a call refused at admission is answered when it allows. */
  pacing?: RefusalPacing;
}

/** What `sendStatus` and a unary callback's error take. */
type GrpcStatus = { code: grpc.status; details: string; metadata?: grpc.Metadata };

/** The listener's certificate and key when INGEST_GRPC_TLS_CERT_FILE / _KEY_FILE are set (checked at load). */
export function grpcTlsFrom(config: {
  INGEST_GRPC_TLS_CERT_FILE: string;
  INGEST_GRPC_TLS_KEY_FILE: string;
}): OtlpGrpcDeps["tls"] {
  if (!config.INGEST_GRPC_TLS_CERT_FILE) return undefined;
  return { cert: readFileSync(config.INGEST_GRPC_TLS_CERT_FILE), key: readFileSync(config.INGEST_GRPC_TLS_KEY_FILE) };
}

export const TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
export const LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
const SIGNAL_OF: Record<string, OtlpSignal> = { [TRACE_EXPORT]: "traces", [LOGS_EXPORT]: "logs" };

const bytes = (b: Buffer) => b;
/**
 * A unary method whose messages stay bytes: decoding is the HTTP door's (shared/otlp/decode.ts).
 * Clients built on it (`grpc.makeGenericClientConstructor`) can send any bytes: the tests' garbage.
 */
export const bytesMethod = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
});

/**
 * A failure of the shared handling as a gRPC status: the code the OTLP spec pairs with the HTTP
 * door's status (401 UNAUTHENTICATED, 400 INVALID_ARGUMENT, 413/429 RESOURCE_EXHAUSTED, 503
 * UNAVAILABLE), and a `Retry-After` as google.rpc.RetryInfo, which is what makes RESOURCE_EXHAUSTED
 * retryable for an exporter. Anything else is INTERNAL (logged by the caller).
 */
export function statusOf(err: unknown): GrpcStatus | null {
  if (err instanceof OtlpDecodeError) return { code: grpc.status.INVALID_ARGUMENT, details: err.message };
  if (!(err instanceof HttpError)) return null;
  const code = GRPC_CODE[err.status] ?? grpc.status.INTERNAL;
  const metadata = trailersOf(err.headers);
  const retryAfter = Number(err.headers["retry-after"] ?? Number.NaN);
  if (Number.isFinite(retryAfter))
    metadata.set("grpc-status-details-bin", Buffer.from(statusWithRetryInfo(code, err.message, retryAfter)));
  return { code, details: err.message, metadata };
}

/** The RateLimit headers of an answer, as trailing metadata. */
function trailersOf(headers: Record<string, string>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) if (name.startsWith("ratelimit-")) metadata.set(name, value);
  return metadata;
}

/** gRPC's peer (`1.2.3.4:5678`, `[::1]:5678`) as an address. */
function peerAddress(peer: string): string | undefined {
  return /^\[?([^\]]+?)\]?:\d+$/.exec(peer)?.[1];
}

/** The status /v1/* answers for a failure of the shared handling (metrics and the ledger). */
function httpStatusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  return err instanceof OtlpDecodeError ? 400 : 500;
}

/**
 * Answers a call refused before its message was read, then ends its stream with RST_STREAM
 * NO_ERROR (RFC 9113 8.1: a server that answered in full may ask the client to stop sending the
 * request "without error"), so the client stops sending the message nobody will read. Without it,
 * grpc-js resumes the stream after the status to drain the message: a refused 500-span export
 * (268 KB) was sent and read whole, 274 KB on the wire against 131 KB with the reset
 * (bench/grpc-refusals.ts). The status, its details and trailers (RetryInfo) go out first; grpc-js
 * clients keep the status they received and take the reset as the end of the call.
 */
function refuseUnread(call: grpc.ServerInterceptingCallInterface, status: GrpcStatus): void {
  call.sendStatus(status);
  // The interceptor is the server's only one: `call` is grpc-js's base call, which holds the
  // node:http2 stream (a field its typings do not declare). Absent, the status alone was sent.
  const stream = (call as { stream?: ServerHttp2Stream }).stream;
  if (stream && !stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
}

interface Admitted {
  key: ResolvedKey;
  admission: RateReservation;
  requestId: string;
  /** Set by the handler: what /v1/* would have answered. */
  outcome?: number;
}

export function createOtlpGrpcServer(deps: OtlpGrpcDeps) {
  // The ledger counts this door apart (docs/ledger.md): accepted per item, refusals per call.
  const counted = countedDoor(deps.pipeline, "grpc");
  const otlp = createOtlpHandling({
    ...deps.pipeline,
    storeAll: counted.storeAll ?? deps.pipeline.storeAll,
    storeBuilt: counted.storeBuilt ?? deps.pipeline.storeBuilt,
  });
  const trusted = deps.trustedProxies ?? [];
  /** Calls admitted from their metadata, found again by the handler through the same object. */
  const admitted = new WeakMap<grpc.Metadata, Admitted>();

  /**
   * `known.tenantId` is set once the credential is authenticated, so a refusal after that (the rate
   * limit's) is answered in the tenant's turn.
   */
  async function admit(
    signal: OtlpSignal,
    metadata: grpc.Metadata,
    peer: string,
    known: { tenantId?: string },
  ): Promise<Admitted> {
    const first = (name: string) => {
      const v = metadata.get(name)[0];
      return typeof v === "string" ? v : undefined;
    };
    const given = first("x-request-id");
    const requestId = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    const client = clientAddress(peerAddress(peer), first("x-forwarded-for") ?? null, trusted);
    // The shared authenticator reads a Request's headers: only the token is carried over (a gRPC
    // client sends no Origin, so the origin rules see a server, as they should).
    const authorization = first("authorization");
    const request = new Request("http://otlp-grpc/", { headers: authorization ? { authorization } : {} });
    const { key } = await deps.pipeline.authenticate(request, client);
    known.tenantId = key.tenantId;
    try {
      const admission = otlp.admit(key, signal);
      try {
        // Confirmed before the message is read, as the HTTP door confirms before reading a body:
        // a herd's others wait here for the door's probe and are refused unread once it is
        // counted. grpc-js would otherwise read each admitted message first (32 at a flood's start).
        await admission.confirm();
      } catch (err) {
        admission.settleUncounted();
        throw err;
      }
      return { key, admission, requestId };
    } catch (err) {
      // Refused once the credential is known (the rate limit's 429), as the HTTP door counts it.
      if (err instanceof HttpError) counted.refused(key, err.status, 1);
      throw err;
    }
  }

  /** Holds each Export call's stream paused until its metadata passed `admit`; refuses it otherwise. */
  const admitFirst: grpc.ServerInterceptor = (method, call) => {
    const signal = SIGNAL_OF[method.path];
    if (!signal) return new grpc.ServerInterceptingCall(call);
    const started = performance.now();
    let admittedCall: Admitted | undefined;
    let refusedStatus: number | undefined;
    let received = false;
    let ended = false;
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, proceed) => {
            const known: { tenantId?: string } = {};
            admit(signal, metadata, call.getPeer(), known).then(
              (a) => {
                // The client went away while the call waited for its admission: nothing to count.
                if (ended) return a.admission.settleUncounted();
                admittedCall = a;
                admitted.set(metadata, a);
                proceed(metadata);
              },
              (err) => {
                refusedStatus = httpStatusOf(err);
                const status = refusal(err, signal, undefined);
                // The message is not read meanwhile (the stream stays paused): 0 bytes held.
                const retryAfter = err instanceof HttpError ? err.headers["retry-after"] : undefined;
                // Answered in the tenant's turn (shared/fair-turns.ts) once it is known: a flood's
                // paced refusals come due together (one Retry-After), and each answer (its
                // trailers, the reset, the flush) would otherwise run back to back, ahead of
                // every other tenant's I/O. Before authentication there is no tenant: at once.
                const answer = () =>
                  known.tenantId === undefined
                    ? refuseUnread(call, status)
                    : void deps.pipeline.turn(known.tenantId).then(() => refuseUnread(call, status));
                if (refusedStatus !== 429 || !deps.pacing || retryAfter === undefined) return answer();
                const credential = metadata.get("authorization")[0];
                void deps.pacing
                  .pace(typeof credential === "string" ? credential : `peer ${call.getPeer()}`, Number(retryAfter), 0)
                  .then(answer);
              },
            );
          },
          onReceiveMessage: (message, proceed) => {
            received = true;
            proceed(message);
          },
          // Every call ends here. An admitted message that never arrived was refused by grpc-js
          // for its size (or the client gave up): settled as the HTTP door settles a body it could
          // not count, and counted as its 413. A no-op once the handler settled it.
          onCancel: () => {
            ended = true;
            if (admittedCall) {
              admittedCall.admission.settleUncounted();
              if (!received) counted.refused(admittedCall.key, 413, 1);
            }
            const status = admittedCall?.outcome ?? refusedStatus ?? (admittedCall && !received ? 413 : 499);
            deps.observe?.(method.path, status, (performance.now() - started) / 1000);
          },
        }),
    });
  };

  function refusal(err: unknown, signal: OtlpSignal, requestId: string | undefined): GrpcStatus {
    const status = statusOf(err);
    if (status) return status;
    deps.logger.error("otlp grpc export failed", { requestId, signal, err: err as Error });
    return { code: grpc.status.INTERNAL, details: "internal error" };
  }

  const exportCall =
    (signal: OtlpSignal) =>
    (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>): void => {
      const a = admitted.get(call.metadata);
      if (!a) {
        callback({ code: grpc.status.INTERNAL, details: "call was not admitted" });
        return;
      }
      otlp.exportRequest(a.admission, a.key, signal, call.request, "protobuf").then(
        (result) => {
          a.outcome = 200;
          counted.refused(a.key, 400, result.rejected);
          const answer = encodeExportResponse(signal, "protobuf", result.rejected, result.message) as Uint8Array;
          callback(null, Buffer.from(answer), trailersOf(result.rateHeaders));
        },
        (err) => {
          a.outcome = httpStatusOf(err);
          if (a.outcome !== 500) counted.refused(a.key, a.outcome, 1);
          callback(refusal(err, signal, a.requestId));
        },
      );
    };

  const server = new grpc.Server({
    "grpc.max_receive_message_length": deps.maxMessageBytes,
    // Answers are an empty message or a partial_success of a few hundred bytes.
    "grpc.max_send_message_length": 64 * 1024,
    // No channelz (gRPC's introspection service, which this port does not serve): grpc-js then
    // skips its per-call and per-message trackers on every call, refused ones included.
    "grpc.enable_channelz": 0,
    interceptors: [admitFirst],
  });
  server.addService(
    { Export: bytesMethod(TRACE_EXPORT) } as unknown as grpc.ServiceDefinition,
    { Export: exportCall("traces") } as grpc.UntypedServiceImplementation,
  );
  server.addService(
    { Export: bytesMethod(LOGS_EXPORT) } as unknown as grpc.ServiceDefinition,
    { Export: exportCall("logs") } as grpc.UntypedServiceImplementation,
  );

  return {
    /** Binds `host:port` (port 0: any free one); resolves with the bound port. */
    listen(port: number, host = "0.0.0.0"): Promise<number> {
      const credentials = deps.tls
        ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: deps.tls.cert, private_key: deps.tls.key }], false)
        : grpc.ServerCredentials.createInsecure();
      return new Promise((resolve, reject) =>
        server.bindAsync(`${host}:${port}`, credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
      );
    },
    /** Stops taking calls and lets those in flight finish (they wait for their PubAck), within `graceMs`. */
    stop(graceMs = 5_000): Promise<void> {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
