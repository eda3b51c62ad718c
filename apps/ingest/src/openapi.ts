import { errorResponses, ERROR_SCHEMA, jsonContent, jsonSchema, withRetryAfter } from "@cellar/shared/openapi";
import { EventPayload, ScorePayload, TracePayload } from "@cellar/shared/payloads";
import { BATCH_ITEM_TYPES, MAX_BATCH_ITEMS } from "./batch.ts";

const ERRORS = {
  400: "Invalid payload (the message names the field)",
  401: "Missing or invalid API key",
  403: "DSN origin rule violation, or service_name not the DSN's service",
  413: "Body too large",
  415: "Content-Type is not application/json, or Content-Encoding is neither gzip nor absent",
  429: "Rate limited (Retry-After)",
  503: "Storage or authentication temporarily unavailable (Retry-After)",
  500: "Server error (never carries internals)",
};

function ingestOperation(summary: string, schema: unknown) {
  return {
    summary,
    requestBody: { required: true, content: jsonContent(jsonSchema(schema as Record<string, unknown>)) },
    responses: {
      200: {
        description: "Accepted and stored durably",
        content: jsonContent({ type: "object", required: ["status"], properties: { status: { const: "success" } } }),
      },
      ...withRetryAfter(errorResponses(ERRORS)),
    },
  };
}

/**
 * A failed OTLP/HTTP request's body: a google.rpc.Status in the request's encoding (JSON also
 * carries `error`, the message, so a client reading the contract's shape finds it).
 */
const otlpStatus = {
  "application/x-protobuf": { schema: { type: "string", contentMediaType: "application/x-protobuf" } },
  "application/json": {
    schema: {
      type: "object",
      required: ["code", "message", "error"],
      properties: { code: { type: "integer" }, message: { type: "string" }, error: { type: "string" } },
    },
  },
};

/** OTLP/HTTP (docs/otlp.md): bodies are the OpenTelemetry protocol's, described there, not here. */
function otlpOperation(summary: string, request: string, response: string) {
  const binary = { schema: { type: "string", contentMediaType: "application/x-protobuf" } };
  return {
    summary,
    description: `OTLP/HTTP: an ${request} as application/x-protobuf or application/json (gzip allowed). Answers an ${response}, with partial_success when some items were refused; failures answer a google.rpc.Status in the request's encoding.`,
    requestBody: {
      required: true,
      content: { "application/x-protobuf": binary, "application/json": { schema: { type: "object" } } },
    },
    responses: {
      200: {
        description: `${response} (empty, or partial_success)`,
        content: { "application/x-protobuf": binary, "application/json": { schema: { type: "object" } } },
      },
      ...withRetryAfter(
        Object.fromEntries(
          Object.entries({
            400: "Undecodable body",
            401: "Missing or invalid API key",
            403: "DSN origin rule violation",
            413: "Body too large, on the wire or after gunzip",
            415: "Content-Type or Content-Encoding not supported",
            429: "Rate limited (Retry-After)",
            503: "Storage or authentication temporarily unavailable (Retry-After)",
            500: "Server error",
          }).map(([status, description]) => [
            status,
            { description: `${description} (google.rpc.Status)`, content: otlpStatus },
          ]),
        ),
      ),
    },
  };
}

/** POST /raw/batch (docs/sdks.md): the item types from the batch door's own table. */
function batchOperation() {
  const item = (type: string, schema: unknown) => ({
    type: "object",
    required: ["type", "body"],
    properties: { type: { const: type }, body: jsonSchema(schema as Record<string, unknown>) },
  });
  const answer = {
    oneOf: [
      { type: "object", required: ["status"], properties: { status: { const: "accepted" } } },
      {
        type: "object",
        required: ["status", "error"],
        properties: { status: { const: "refused" }, error: { type: "string" } },
      },
    ],
  };
  return {
    summary: "Ingest many traces and events in one request (beyond the contract; the SDKs use it)",
    description:
      "Each item is validated exactly as its single door (/raw/traces, /raw/events) validates a body and answered on its own, in order; refused items name the field under `body.`. The 200 comes once every accepted item is stored; each is stored with the message id its single door gives the same body, so a retry is stored once. The rate limit counts items (a batch larger than the burst: 413). Whole-batch errors: a broken envelope (400 naming `items[i]`), 401, 403, 413, 415, 429, 503 (nothing stored as accepted: retry the batch). Content-Encoding: gzip accepted; the body limit applies before and after inflating.",
    requestBody: {
      required: true,
      content: jsonContent({
        type: "object",
        required: ["items"],
        properties: {
          items: {
            type: "array",
            minItems: 1,
            maxItems: MAX_BATCH_ITEMS,
            items: { oneOf: Object.entries(BATCH_ITEM_TYPES).map(([type, t]) => item(type, t.schema)) },
          },
        },
      }),
    },
    responses: {
      200: {
        description: "Every item answered; every accepted one stored durably",
        content: jsonContent({
          type: "object",
          required: ["status", "items"],
          properties: { status: { enum: ["success", "partial"] }, items: { type: "array", items: answer } },
        }),
      },
      ...withRetryAfter(
        errorResponses({
          ...ERRORS,
          400: "Broken envelope: not JSON, no items array, too many items, an item that is not an object or names an unknown type",
          413: "Body too large (on the wire or after gunzip), or more items than the rate-limit burst",
        }),
      ),
    },
  };
}

let cached: Record<string, unknown> | undefined;

/**
 * OpenAPI 3.1 document of the ingestion host, from the TypeBox schemas in shared/payloads.ts
 * that validate POST /raw/traces and /raw/events.
 */
export function ingestOpenApi(): Record<string, unknown> {
  return (cached ??= {
    openapi: "3.1.0",
    info: {
      title: "Cellar ingestion API",
      version: "1.0.0",
      description: "Write-only: traces and events. No read endpoints.",
    },
    security: [{ telemetryKey: [] }],
    components: {
      securitySchemes: {
        telemetryKey: {
          type: "http",
          scheme: "bearer",
          description: "Telemetry API key or DSN (`svc-ing-s-`, `svc-ing-c-`)",
        },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths: {
      "/raw/traces": {
        post: {
          operationId: "postRawTraces",
          ...ingestOperation("Ingest one model call (trace payload)", TracePayload),
        },
      },
      "/raw/events": {
        post: { operationId: "postRawEvents", ...ingestOperation("Ingest one application event", EventPayload) },
      },
      "/raw/batch": { post: { operationId: "postRawBatch", ...batchOperation() } },
      "/raw/scores": {
        post: {
          operationId: "postRawScores",
          ...ingestOperation("Record a score of a session or a trace (docs/scores.md)", ScorePayload),
        },
      },
      "/v1/traces": {
        post: {
          operationId: "postOtlpTraces",
          ...otlpOperation(
            "Ingest OTLP spans (GenAI model calls and agent steps)",
            "ExportTraceServiceRequest",
            "ExportTraceServiceResponse",
          ),
        },
      },
      "/v1/logs": {
        post: {
          operationId: "postOtlpLogs",
          ...otlpOperation("Ingest OTLP log records (events)", "ExportLogsServiceRequest", "ExportLogsServiceResponse"),
        },
      },
    },
  });
}
