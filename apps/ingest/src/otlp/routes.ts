import { HttpError } from "@cellar/shared/errors";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import type { Logger } from "@cellar/shared/logger";
import {
  decodeLogs,
  decodeTraces,
  encodeExportResponse,
  encodeStatus,
  OtlpDecodeError,
  type OtlpEncoding,
} from "@cellar/shared/otlp/decode";
import { mapLogs, mapSpans, type MapResult } from "@cellar/shared/otlp/map";
import { ingestMessageProblem } from "@cellar/shared/ingest-rules";
import { IDENTIFIER_PATTERN, LIMITS } from "@cellar/shared/payloads";
import type { Authenticated } from "../credentials.ts";
import type { StoreInput } from "../publish.ts";
import { readBodyBytes } from "../body.ts";

/**
 * POST /v1/traces and /v1/logs (OTLP/HTTP 1.x, docs/otlp.md). Same credentials, rate limit, body
 * limit and durability rule as /raw/*: the answer is 200 only after JetStream stored every
 * message the request maps to. Failures answer a google.rpc.Status in the request's encoding
 * (the JSON one also carries the contract's `error` field).
 */
export interface OtlpDeps {
  /** `client`: the peer address, for the pre-authentication limiter (credentials.ts). */
  authenticate: (request: Request, client?: string) => Promise<Authenticated>;
  takeRateToken: (keyId: string) => Record<string, string>;
  store: (input: StoreInput) => Promise<unknown>;
  maxBodyBytes: number;
  logger: Logger;
}

export type OtlpSignal = "traces" | "logs";

const PROTOBUF = /^application\/x-protobuf\s*(;.*)?$/i;
const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
/** gRPC codes the OTLP spec pairs with HTTP statuses in its Status bodies. */
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 8, 415: 3, 429: 8, 503: 14 };
const IDENT = new RegExp(IDENTIFIER_PATTERN);

export function encodingOf(request: Request): OtlpEncoding | null {
  const type = (request.headers.get("content-type") ?? "").trim();
  if (PROTOBUF.test(type)) return "protobuf";
  if (JSON_TYPE.test(type)) return "json";
  return null;
}

export function createOtlpIngest(deps: OtlpDeps) {
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

  function serviceFor(key: ResolvedKey, given: string | null): string | null {
    // A DSN names its service; the SDK's resource (often "unknown_service:node") cannot override it.
    if (key.kind === "dsn-server" || key.kind === "dsn-client") return key.serviceName!;
    if (!given || given.length > LIMITS.serviceName || !IDENT.test(given)) return null;
    return given;
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
      headers = { ...headers, ...cors, ...deps.takeRateToken(key.id) };
      if (!encoding) throw new HttpError(415, "content-type must be application/x-protobuf or application/json");
      const bytes = await readBodyBytes(request, deps.maxBodyBytes);
      const mapped: MapResult<Record<string, unknown>> =
        signal === "traces"
          ? (mapSpans(decodeTraces(bytes, encoding)) as any)
          : (mapLogs(decodeLogs(bytes, encoding)) as any);
      const inputs: StoreInput[] = [];
      for (const item of mapped.accepted) {
        const serviceName = serviceFor(key, item.serviceName);
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
        const kind = isTrace ? "trace" : "event";
        // The mapping is deterministic (attribute order is the request's, the same in protobuf and
        // JSON): its JSON is the body the message id hashes, so a retry gets the same ids.
        const payloadText = JSON.stringify(item.payload);
        inputs.push({
          kind,
          tenantId: key.tenantId,
          serviceName: serviceName!,
          payload: item.payload as any,
          idSource: `otlp\n${payloadText}`,
          payloadText,
        });
      }
      // Every message or none answered as stored: a retry of a half-stored request is deduplicated
      // by the message ids (same content, same id), so nothing is counted twice.
      await Promise.all(inputs.map((input) => deps.store(input)));
      const message = mapped.rejected
        ? `${mapped.rejected} ${signal === "traces" ? "spans" : "log records"} refused: ${mapped.reasons.join("; ")}`
        : null;
      const body = encodeExportResponse(signal, encoding, mapped.rejected, message);
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
