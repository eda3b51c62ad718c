import protobuf from "protobufjs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { JsonPieceError, type SplitJson, splitJsonInSteps } from "../json-steps.ts";
import { runAtOnce, type Steps } from "../steps.ts";
import { decodeDownPath } from "./proto-steps.ts";

/**
 * OTLP/HTTP request bodies (protobuf or JSON) turned into one plain shape. Protobuf goes through
 * protobufjs with the OpenTelemetry project's own .proto files (vendored under ./proto from
 * open-telemetry/opentelemetry-proto, Apache-2.0): no hand-written wire decoding. JSON follows the
 * OTLP/JSON rules (lowerCamelCase keys, hex trace/span ids, int64 as string or number, enums as
 * integers).
 */

const PROTO_DIR = join(fileURLToPath(new URL(".", import.meta.url)), "proto");
const FILES = [
  "opentelemetry/proto/collector/trace/v1/trace_service.proto",
  "opentelemetry/proto/collector/logs/v1/logs_service.proto",
];

let rootCache: protobuf.Root | null = null;
/**
 * The OTLP .proto files, parsed once per process (~120 ms, synchronous). The ingest host calls it
 * at start (`loadOtlpSchemas`), not on the first protobuf request, which would hold every other
 * request behind it for that long.
 */
export function loadOtlpSchemas(): void {
  root();
}
function root(): protobuf.Root {
  if (rootCache) return rootCache;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => (target.startsWith("/") ? target : join(PROTO_DIR, target));
  r.loadSync(FILES, { keepCase: false });
  r.resolveAll();
  rootCache = r;
  return r;
}
const type = (name: string) => root().lookupType(name);

export const OTLP_TYPES = {
  traceRequest: "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
  traceResponse: "opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse",
  logsRequest: "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest",
  logsResponse: "opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse",
} as const;

export type Attributes = Record<string, unknown>;

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  /** Unix nanoseconds as decimal strings (int64 does not fit a JS number). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attributes;
  events: Array<{ name: string; timeUnixNano: string; attributes: Attributes }>;
  status: { code: number; message: string | null };
  resource: Attributes;
  scope: { name: string | null; version: string | null };
}

export interface OtlpLogRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string | null;
  eventName: string | null;
  body: unknown;
  attributes: Attributes;
  traceId: string | null;
  spanId: string | null;
  resource: Attributes;
  scope: { name: string | null; version: string | null };
}

/** Thrown for a body that cannot be decoded at all (answered 400). */
export class OtlpDecodeError extends Error {}

type IdEncoding = "hex" | "base64";

/** AnyValue -> plain JSON value. kvlist becomes an object, bytes stay base64 text. */
export function anyValue(v: any, depth = 0): unknown {
  if (v === null || v === undefined || typeof v !== "object") return null;
  if (depth > 32) throw new OtlpDecodeError("attribute value nested deeper than 32 levels");
  if (v instanceof protobuf.Message) return pbAnyValue(v, depth);
  if ("stringValue" in v) return String(v.stringValue);
  if ("boolValue" in v) return Boolean(v.boolValue);
  if ("intValue" in v) return toInt(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return ((v.arrayValue?.values ?? []) as any[]).map((x) => anyValue(x, depth + 1));
  if ("kvlistValue" in v) return keyValues(v.kvlistValue?.values, depth + 1);
  if ("bytesValue" in v)
    return typeof v.bytesValue === "string" ? v.bytesValue : Buffer.from(v.bytesValue ?? []).toString("base64");
  return null;
}

/**
 * A decoded protobuf AnyValue: every field exists (defaults sit on the prototype), so the oneof's
 * virtual `value` property says which one is set.
 */
function pbAnyValue(v: any, depth: number): unknown {
  switch (v.value as string | undefined) {
    case "stringValue":
      return v.stringValue;
    case "boolValue":
      return v.boolValue;
    case "intValue":
      return toInt(v.intValue);
    case "doubleValue":
      return v.doubleValue;
    case "arrayValue":
      return (v.arrayValue.values as any[]).map((x) => anyValue(x, depth + 1));
    case "kvlistValue":
      return keyValues(v.kvlistValue.values, depth + 1);
    case "bytesValue":
      return Buffer.from(v.bytesValue.buffer, v.bytesValue.byteOffset, v.bytesValue.byteLength).toString("base64");
    default:
      return null;
  }
}

/** int64 attribute: a number when exact, else its decimal text. */
function toInt(raw: unknown): number | string {
  const text = String(raw);
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

function keyValues(list: unknown, depth = 0): Attributes {
  const out: Attributes = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list) {
    if (!kv || typeof kv.key !== "string") continue;
    out[kv.key] = anyValue(kv.value, depth);
  }
  return out;
}

function idHex(raw: unknown, encoding: IdEncoding): string {
  if (raw === undefined || raw === null || raw === "") return "";
  if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("hex");
  if (typeof raw !== "string") return "";
  return encoding === "hex" ? raw.toLowerCase() : Buffer.from(raw, "base64").toString("hex");
}

// fixed64 from protobuf is a Long (long.js, exact); from JSON a string or number.
const nanos = (raw: unknown): string => (raw === undefined || raw === null || raw === "" ? "0" : String(raw));
const scopeOf = (s: any) => ({
  name: typeof s?.name === "string" && s.name ? s.name : null,
  version: typeof s?.version === "string" && s.version ? s.version : null,
});
const pick = (o: any, camel: string, snake: string) => (o?.[camel] !== undefined ? o[camel] : o?.[snake]);

/** The spans of a decoded request, one step per span (shared/steps.ts). */
function* walkSpans(body: any, encoding: IdEncoding): Steps<OtlpSpan[]> {
  const out: OtlpSpan[] = [];
  for (const rs of asArray(pick(body, "resourceSpans", "resource_spans"))) {
    const resource = keyValues(rs?.resource?.attributes);
    for (const ss of asArray(pick(rs, "scopeSpans", "scope_spans"))) {
      const scope = scopeOf(ss?.scope);
      for (const s of asArray(ss?.spans)) {
        out.push({
          traceId: idHex(pick(s, "traceId", "trace_id"), encoding),
          spanId: idHex(pick(s, "spanId", "span_id"), encoding),
          parentSpanId: idHex(pick(s, "parentSpanId", "parent_span_id"), encoding) || null,
          name: typeof s?.name === "string" ? s.name : "",
          kind: Number(s?.kind ?? 0) || 0,
          startTimeUnixNano: nanos(pick(s, "startTimeUnixNano", "start_time_unix_nano")),
          endTimeUnixNano: nanos(pick(s, "endTimeUnixNano", "end_time_unix_nano")),
          attributes: keyValues(s?.attributes),
          events: asArray(s?.events).map((e: any) => ({
            name: typeof e?.name === "string" ? e.name : "",
            timeUnixNano: nanos(pick(e, "timeUnixNano", "time_unix_nano")),
            attributes: keyValues(e?.attributes),
          })),
          status: {
            code: Number(s?.status?.code ?? 0) || 0,
            message: typeof s?.status?.message === "string" && s.status.message ? s.status.message : null,
          },
          resource,
          scope,
        });
        yield;
      }
    }
  }
  return out;
}

/** The log records of a decoded request, one step per record (shared/steps.ts). */
function* walkLogs(body: any, encoding: IdEncoding): Steps<OtlpLogRecord[]> {
  const out: OtlpLogRecord[] = [];
  for (const rl of asArray(pick(body, "resourceLogs", "resource_logs"))) {
    const resource = keyValues(rl?.resource?.attributes);
    for (const sl of asArray(pick(rl, "scopeLogs", "scope_logs"))) {
      const scope = scopeOf(sl?.scope);
      for (const r of asArray(pick(sl, "logRecords", "log_records"))) {
        const eventName = pick(r, "eventName", "event_name");
        out.push({
          timeUnixNano: nanos(pick(r, "timeUnixNano", "time_unix_nano")),
          observedTimeUnixNano: nanos(pick(r, "observedTimeUnixNano", "observed_time_unix_nano")),
          severityNumber: Number(pick(r, "severityNumber", "severity_number") ?? 0) || 0,
          severityText:
            typeof pick(r, "severityText", "severity_text") === "string"
              ? pick(r, "severityText", "severity_text") || null
              : null,
          eventName: typeof eventName === "string" && eventName ? eventName : null,
          body: r?.body === undefined ? null : anyValue(r.body),
          attributes: keyValues(r?.attributes),
          traceId: idHex(pick(r, "traceId", "trace_id"), encoding) || null,
          spanId: idHex(pick(r, "spanId", "span_id"), encoding) || null,
          resource,
          scope,
        });
        yield;
      }
    }
  }
  return out;
}

function asArray(v: unknown): any[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError("expected an array where the OTLP schema has a repeated field");
  return v;
}

/** The decoded message itself, walked directly: toObject would copy everything once more. */
export function decodeProtobuf(typeName: string, bytes: Uint8Array): any {
  try {
    // protobufjs decodes strings strictly: invalid UTF-8 fails the request (400), as the spec wants.
    return type(typeName).decode(bytes);
  } catch (err) {
    throw new OtlpDecodeError(`body is not a valid protobuf ${typeName.split(".").pop()}: ${(err as Error).message}`);
  }
}

/** A request's repeated message fields down to its items (protobufjs's camelCase names). */
const ITEM_PATH: Record<string, string[]> = {
  [OTLP_TYPES.traceRequest]: ["resourceSpans", "scopeSpans", "spans"],
  [OTLP_TYPES.logsRequest]: ["resourceLogs", "scopeLogs", "logRecords"],
};

/**
 * `decodeProtobuf` as steps, one per span or log record (issue 41: the one-piece decode of a
 * 275 KB gRPC message held every other tenant's request): proto-steps.ts walks the request down
 * ITEM_PATH and decodes each item on its own. What the walk does not vouch for, and any decoder
 * error, is decoded in one piece, so the answer, error message included, is the one-piece
 * decode's (checked on generated and mutated messages: proto-steps.test.ts).
 */
export function* decodeProtobufInSteps(typeName: string, bytes: Uint8Array): Steps<any> {
  try {
    const message = yield* decodeDownPath(type(typeName), bytes, ITEM_PATH[typeName] ?? []);
    if (message !== null) return message;
  } catch {
    // The one-piece decode below gives this message's answer.
  }
  return decodeProtobuf(typeName, bytes);
}

/**
 * `parseJson` as steps, one per span or log record (issue 41: a 480 KB OTLP/JSON body's parse was
 * one piece of 2-7 ms at load): shared/json-steps.ts splits the body along ITEM_PATH. Same value
 * and errors: a body it cannot vouch for (snake_case names, not an object) is parsed in one piece.
 */
function* parseJsonInSteps(text: string, typeName: string): Steps<any> {
  let split: SplitJson | null;
  try {
    split = yield* splitJsonInSteps(text, ITEM_PATH[typeName]);
  } catch (err) {
    if (err instanceof JsonPieceError) throw new OtlpDecodeError("body is not valid JSON");
    throw err;
  }
  return split ? split.value : parseJson(text);
}

function parseJson(text: string): any {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new OtlpDecodeError("body is not valid JSON");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new OtlpDecodeError("body must be a JSON object");
  return v;
}

export type OtlpEncoding = "protobuf" | "json";

export function decodeTraces(bytes: Uint8Array, encoding: OtlpEncoding): OtlpSpan[] {
  return runAtOnce(decodeTracesInSteps(bytes, encoding));
}

/**
 * `decodeTraces` as steps: the body decoded or parsed one step per span (decodeProtobufInSteps,
 * parseJsonInSteps), then one step per span (the walk, ~2 ms more for 500 spans), so an ingest
 * host can run it in slices between other requests (shared/steps.ts).
 */
export function* decodeTracesInSteps(bytes: Uint8Array, encoding: OtlpEncoding): Steps<OtlpSpan[]> {
  const body =
    encoding === "protobuf"
      ? yield* decodeProtobufInSteps(OTLP_TYPES.traceRequest, bytes)
      : yield* parseJsonInSteps(utf8(bytes), OTLP_TYPES.traceRequest);
  yield;
  return yield* walkSpans(body, encoding === "protobuf" ? "base64" : "hex");
}

export function decodeLogs(bytes: Uint8Array, encoding: OtlpEncoding): OtlpLogRecord[] {
  return runAtOnce(decodeLogsInSteps(bytes, encoding));
}

/** `decodeLogs` as steps: the decode or parse, then the walk, one step per log record each (see decodeTracesInSteps). */
export function* decodeLogsInSteps(bytes: Uint8Array, encoding: OtlpEncoding): Steps<OtlpLogRecord[]> {
  const body =
    encoding === "protobuf"
      ? yield* decodeProtobufInSteps(OTLP_TYPES.logsRequest, bytes)
      : yield* parseJsonInSteps(utf8(bytes), OTLP_TYPES.logsRequest);
  yield;
  return yield* walkLogs(body, encoding === "protobuf" ? "base64" : "hex");
}

function utf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new OtlpDecodeError("body is not valid UTF-8");
  }
}

/** Export*ServiceResponse in the request's encoding; partial_success only when something was refused. */
export function encodeExportResponse(
  signal: "traces" | "logs",
  encoding: OtlpEncoding,
  rejected: number,
  message: string | null,
): Uint8Array | string {
  const field = signal === "traces" ? "rejectedSpans" : "rejectedLogRecords";
  const body = rejected > 0 || message ? { partialSuccess: { [field]: rejected, errorMessage: message ?? "" } } : {};
  if (encoding === "json") {
    // int64 is a string in OTLP/JSON.
    const json =
      rejected > 0 || message ? { partialSuccess: { [field]: String(rejected), errorMessage: message ?? "" } } : {};
    return JSON.stringify(json);
  }
  const t = type(signal === "traces" ? OTLP_TYPES.traceResponse : OTLP_TYPES.logsResponse);
  return t.encode(t.fromObject(body)).finish();
}

/** google.rpc.Status for a failed request, in the request's encoding (OTLP/HTTP "Failures"). */
export function encodeStatus(encoding: OtlpEncoding, code: number, message: string): Uint8Array | string {
  if (encoding === "json") return JSON.stringify({ code, message });
  // google.rpc.Status { int32 code = 1; string message = 2; }: two fields, written with protobufjs.
  const w = protobuf.Writer.create();
  w.uint32(8).int32(code);
  w.uint32(18).string(message);
  return w.finish();
}

/** For tests and the bench: encode a JSON-shaped request (hex ids) as protobuf bytes. */
export function encodeRequestFromJson(signal: "traces" | "logs", json: any): Uint8Array {
  const t = type(signal === "traces" ? OTLP_TYPES.traceRequest : OTLP_TYPES.logsRequest);
  const hexToB64 = (o: any): any => {
    if (Array.isArray(o)) return o.map(hexToB64);
    if (!o || typeof o !== "object") return o;
    const out: any = {};
    for (const [k, v] of Object.entries(o))
      out[k] =
        ["traceId", "spanId", "parentSpanId"].includes(k) && typeof v === "string"
          ? Buffer.from(v, "hex").toString("base64")
          : hexToB64(v);
    return out;
  };
  return t.encode(t.fromObject(hexToB64(json))).finish();
}
