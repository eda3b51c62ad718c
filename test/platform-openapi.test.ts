import { afterAll, beforeAll, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createTestStack, type TestStack } from "./helpers/stack";
import { createPlatformApp } from "../apps/platform/src/app";
import { createLogger } from "@cellar/shared/logger";

let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
});
afterAll(() => stack.stop());

async function validate(doc: unknown) {
  const validator = new Validator();
  const result = await validator.validate(doc as Parameters<Validator["validate"]>[0]);
  return {
    valid: result.valid,
    errors: JSON.stringify(result.errors ?? null).slice(0, 2000),
    version: validator.version,
  };
}

test("platform OpenAPI 3.1 at /api/v1/openapi.json is valid and covers every contract read path", async () => {
  const res = await stack.platformRequest("/openapi.json");
  expect(res.status).toBe(200);
  const doc = await res.json();
  const result = await validate(doc);
  expect(result.errors).toBe("null");
  expect(result.valid).toBe(true);
  expect(result.version).toBe("3.1");
  const S = "/telemetry/otel/sessions/{serviceName}/{sessionId}";
  const expected: Array<[string, string]> = [
    ...[
      "transcript",
      "transcript/items/{itemId}",
      "traces",
      "spans",
      "tree",
      "graph",
      "events",
      "tldr",
      "problem-analysis",
      "cost-by-model",
      "cost-breakdown",
      "tool-costs",
      "tool-schemas",
    ].map((p) => ["get", `${S}/${p}`] as [string, string]),
    ["get", "/telemetry/metrics/session/{serviceName}/{sessionId}"],
    ["get", "/telemetry/otel/sessions/{sessionId}/intents"],
    ["post", "/telemetry/otel/sessions/filtered"],
    ["get", "/telemetry/otel/trace/{traceId}"],
    ["get", "/telemetry/otel/spans/{serviceName}/{traceId}"],
    ["get", "/telemetry/otel/spans/{spanId}"],
    ["get", "/telemetry/otel/events/{serviceName}/{traceId}"],
    ["get", "/telemetry/metrics/trace/{traceId}"],
    ["post", "/telemetry/otel/traces/filtered"],
    ["post", "/telemetry/otel/issues/filtered"],
    ["post", "/telemetry/otel/issues/{serviceName}/stats"],
    ["get", "/telemetry/otel/issues/{issueId}/breakdown"],
    ["post", "/telemetry/otel/findings/filtered"],
    ["get", "/telemetry/otel/findings/{serviceName}/stats"],
  ];
  for (const [method, path] of expected)
    expect({ path, method, op: Boolean(doc.paths[path]?.[method]) }).toEqual({ path, method, op: true });
  // The bare session path has only the admin DELETE (data subject requests), never a read.
  expect(Object.keys(doc.paths[S] ?? {})).toEqual(["delete"]);
  expect(doc.paths["/telemetry/otel/traces/{traceId}"]).toBeUndefined();

  // Generated from the validating schemas: the required query parameter and the filtered body.
  const trace = doc.paths["/telemetry/otel/trace/{traceId}"].get;
  expect(trace.parameters).toContainEqual(
    expect.objectContaining({ name: "serviceName", in: "query", required: true }),
  );
  const body = doc.paths["/telemetry/otel/sessions/filtered"].post.requestBody.content["application/json"].schema;
  expect(body.required).toEqual(["serviceName"]);
  expect(Object.keys(body.properties)).toEqual(
    expect.arrayContaining(["serviceName", "filters", "sort", "limit", "offset", "skipTotalCount"]),
  );
  expect(
    doc.paths["/telemetry/otel/issues/filtered"].post.requestBody.content["application/json"].schema.required,
  ).toEqual(["service_name"]);
  const transcript = doc.paths[`${S}/transcript`].get;
  expect(transcript.responses["200"].content["application/json"].schema.properties.status).toBeDefined();
  expect(transcript.responses["401"].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
  expect(JSON.stringify(doc)).not.toContain('"error":"invalid'); // route error texts are not schema keywords
});

test("a broken document is rejected by the validator (the check can fail)", async () => {
  const doc = await (await stack.platformRequest("/openapi.json")).json();
  doc.paths["/telemetry/otel/trace/{traceId}"].get.responses = "nope";
  expect((await validate(doc)).valid).toBe(false);
});

test("ingestion OpenAPI 3.1 at /openapi.json is valid and built from the payload schemas", async () => {
  const res = await stack.ingest.handle(new Request("http://localhost/openapi.json"));
  expect(res.status).toBe(200);
  const doc = await res.json();
  const result = await validate(doc);
  expect(result.errors).toBe("null");
  expect(result.valid).toBe(true);
  const traces = doc.paths["/raw/traces"].post.requestBody.content["application/json"].schema;
  expect(traces.required).toEqual(
    expect.arrayContaining(["provider", "session_id", "request", "responses", "start_time", "end_time"]),
  );
  expect(traces.properties.responses.maxItems).toBe(2);
  expect(doc.paths["/raw/events"].post.requestBody.content["application/json"].schema.required).toEqual(
    expect.arrayContaining(["name", "session_id", "timestamp"]),
  );
  expect(Object.keys(doc.paths["/v1/traces"].post.requestBody.content)).toEqual([
    "application/x-protobuf",
    "application/json",
  ]);
  expect(doc.paths["/v1/logs"].post.responses["429"]).toBeDefined();
});

test("a 500 never leaks internals: bare body, request id, no stack", async () => {
  const boom = () => {
    throw new Error("connect ECONNREFUSED 10.0.0.7:5432 at /srv/secret/db.ts:12");
  };
  const app = createPlatformApp({
    db: { select: boom } as never,
    sql: boom as never,
    keys: {
      resolve: async () => ({
        id: "k",
        tenantId: "t",
        kind: "platform",
        serviceName: null,
        allowedOrigins: null,
        userId: "u",
        userRole: "owner",
        tenantPlan: "pro",
      }),
    } as never,
    logger: createLogger("silent"),
    windowSeconds: 1,
  });
  const res = await app.handle(
    new Request("http://localhost/api/v1/telemetry/otel/sessions/a/b/transcript", {
      headers: { authorization: "Token anything" },
    }),
  );
  expect(res.status).toBe(500);
  expect(await res.text()).toBe(JSON.stringify({ error: "internal server error" }));
  expect(res.headers.get("x-request-id")).toBeTruthy();
});
