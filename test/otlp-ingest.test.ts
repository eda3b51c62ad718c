import { decodePayload } from "@cellar/shared/db/payload-codec";
import { derivedSpanRows } from "../apps/platform/src/query/traces/spans";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import protobuf from "protobufjs";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createLogger } from "@cellar/shared/logger";
import { createIngestApp } from "../apps/ingest/src/app";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/** OTLP/HTTP protocol answers on /v1/traces and /v1/logs (docs/otlp.md, "Protocol"). */

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 60 });
  tenant = await bootstrapTenant(stack.database.db, { name: "proto-co" });
});
afterAll(() => stack.stop());

const kv = (key: string, value: unknown) => ({
  key,
  value:
    typeof value === "string"
      ? { stringValue: value }
      : typeof value === "number"
        ? Number.isInteger(value)
          ? { intValue: String(value) }
          : { doubleValue: value }
        : Array.isArray(value)
          ? { arrayValue: { values: value.map((v) => ({ stringValue: String(v) })) } }
          : { boolValue: value },
});

function chatSpan(traceId: string, spanId: string, extra: Record<string, unknown> = {}) {
  const attrs: Record<string, unknown> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "anthropic",
    "gen_ai.request.model": "claude-sonnet-4-5",
    "gen_ai.response.model": "claude-sonnet-4-5-20250929",
    "gen_ai.response.id": `msg_${spanId}`,
    "gen_ai.usage.input_tokens": 1200,
    "gen_ai.usage.output_tokens": 80,
    "gen_ai.usage.cache_read.input_tokens": 1000,
    "gen_ai.response.finish_reasons": ["end_turn"],
    "gen_ai.conversation.id": "conv-proto",
    "gen_ai.input.messages": JSON.stringify([
      { role: "user", parts: [{ type: "text", content: "Summarise my notes" }] },
    ]),
    "gen_ai.output.messages": JSON.stringify([
      { role: "assistant", parts: [{ type: "text", content: "Here is the summary." }], finish_reason: "end_turn" },
    ]),
    ...extra,
  };
  return {
    traceId,
    spanId,
    name: "chat claude-sonnet-4-5",
    kind: 3,
    startTimeUnixNano: "1760000000000000000",
    endTimeUnixNano: "1760000001500000000",
    attributes: Object.entries(attrs).map(([k, v]) => kv(k, v)),
  };
}

const request = (spans: unknown[], service = "notes-app") => ({
  resourceSpans: [
    {
      resource: { attributes: [kv("service.name", service), kv("deployment.environment.name", "prod")] },
      // OpenLLMetry JS up to 0.27.0 copies Anthropic's own input count (docs/otlp.md, "Tokens").
      scopeSpans: [{ scope: { name: "@traceloop/instrumentation-anthropic", version: "0.27.0" }, spans }],
    },
  ],
});

function post(path: string, body: BodyInit | Uint8Array, headers: Record<string, string>) {
  return stack.ingest.handle(
    new Request(`http://ingest.test${path}`, { method: "POST", headers, body: body as BodyInit }),
  );
}
const auth = () => ({ authorization: `Bearer ${tenant.telemetryKey}` });
const statusType = new protobuf.Type("Status")
  .add(new protobuf.Field("code", 1, "int32"))
  .add(new protobuf.Field("message", 2, "string"));

/** A service's stored traces and spans, every column but the row and service ids. */
async function storedRows(service: string) {
  const rows = await stack.database
    .sql`select t.trace_id, t.session_id, t.environment, t.provider, t.model, t.start_time, t.end_time, t.payload, (select z.payload_z from trace_payloads z where z.trace_pk = t.id) as payload_z from traces t
    join trace_services s on s.id = t.trace_service_id where s.name = ${service} order by t.trace_id`;
  // The payload as stored, whichever shape holds it (shared/db/payload-codec.ts).
  const stored = rows.map(({ payload_z, ...r }: any) => ({
    ...r,
    payload: decodePayload({ payload: r.payload, payload_z }),
  }));
  // The spans every read derives from it (migration 0017: no span rows).
  const spans = stored
    .flatMap((t: any) =>
      derivedSpanRows({ id: "", trace_id: t.trace_id, session_id: t.session_id, payload: t.payload }),
    )
    .map(({ session_id: _, start_ms: __, ...r }) => r)
    .sort((a, b) => (a.span_id < b.span_id ? -1 : 1));
  return { rows: stored, spans };
}

describe("same spans, two encodings", () => {
  test("protobuf and JSON bodies of the same spans store identical rows", async () => {
    // The same spans to two services: one as OTLP/JSON, one as protobuf.
    const spans = [chatSpan("aa".repeat(16), "01".repeat(8))];
    const a = await post("/v1/traces", JSON.stringify(request(spans, "enc-json")), {
      ...auth(),
      "content-type": "application/json",
    });
    expect(a.status).toBe(200);
    expect(await a.json()).toEqual({});
    const b = await post("/v1/traces", encodeRequestFromJson("traces", request(spans, "enc-proto")), {
      ...auth(),
      "content-type": "application/x-protobuf",
    });
    expect(b.status).toBe(200);
    expect(b.headers.get("content-type")).toBe("application/x-protobuf");
    expect((await b.arrayBuffer()).byteLength).toBe(0); // an empty ExportTraceServiceResponse
    const [fromJson, fromProto] = await waitFor(async () => {
      const x = await storedRows("enc-json");
      const y = await storedRows("enc-proto");
      return x.rows.length && y.rows.length ? [x, y] : null;
    });
    expect(fromProto).toEqual(fromJson);
    expect(fromJson.spans.length).toBe(2);
    expect(fromJson.rows[0]).toMatchObject({
      session_id: "conv-proto",
      environment: "prod",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
    // That instrumentation's input count leaves the cache out: prompt = 1200 new + 1000 read from the cache.
    expect(fromJson.rows[0].payload.responses[0].usage).toMatchObject({
      prompt_tokens: 2200,
      completion_tokens: 80,
      prompt_tokens_details: { cached_tokens: 1000 },
    });
    const llm = fromJson.spans.find((s: any) => s.kind === "llm")!;
    expect(llm.attributes).toMatchObject({
      "gen_ai.provider.name": "anthropic",
      "gen_ai.usage.input_tokens": 2200,
      "gen_ai.usage.cache_read.input_tokens": 1000,
      "gen_ai.response.finish_reasons": ["end_turn"],
    });
  });

  test("gzip bodies are accepted", async () => {
    const body = gzipSync(encodeRequestFromJson("traces", request([chatSpan("cc".repeat(16), "02".repeat(8))])));
    const res = await post("/v1/traces", body, {
      ...auth(),
      "content-type": "application/x-protobuf",
      "content-encoding": "gzip",
    });
    expect(res.status).toBe(200);
    await waitFor(
      async () => (await stack.database.sql`select 1 from traces where trace_id like 'cccc%'`).length === 1,
    );
  });
});

describe("partial success", () => {
  test("refused spans are counted in partial_success.rejected_spans with a message; the rest is stored", async () => {
    const spans = [
      chatSpan("dd".repeat(16), "03".repeat(8)),
      chatSpan("dd".repeat(16), "04".repeat(8), { "gen_ai.request.model": "", "gen_ai.response.model": "" }),
      chatSpan("00".repeat(16), "05".repeat(8)),
    ];
    const res = await post("/v1/traces", JSON.stringify(request(spans)), {
      ...auth(),
      "content-type": "application/json",
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.partialSuccess.rejectedSpans).toBe("2");
    expect(body.partialSuccess.errorMessage).toContain("gen_ai.request.model");
    expect(body.partialSuccess.errorMessage).toContain("trace_id");
    await waitFor(
      async () => (await stack.database.sql`select 1 from traces where trace_id like 'dddd%'`).length === 1,
    );
  });

  test("spans without GenAI meaning are accepted and not stored", async () => {
    const http = {
      traceId: "ee".repeat(16),
      spanId: "06".repeat(8),
      name: "GET /",
      kind: 2,
      startTimeUnixNano: "1760000000000000000",
      endTimeUnixNano: "1760000000100000000",
      attributes: [kv("http.request.method", "GET")],
    };
    const res = await post("/v1/traces", JSON.stringify(request([http])), {
      ...auth(),
      "content-type": "application/json",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
  });

  test("protobuf answers carry partial_success in protobuf", async () => {
    const res = await post(
      "/v1/traces",
      encodeRequestFromJson("traces", request([chatSpan("00".repeat(16), "07".repeat(8))])),
      { ...auth(), "content-type": "application/x-protobuf" },
    );
    expect(res.status).toBe(200);
    const root = protobuf.Root.fromJSON({
      nested: {
        R: { fields: { partial_success: { type: "P", id: 1 } } },
        P: { fields: { rejected_spans: { type: "int64", id: 1 }, error_message: { type: "string", id: 2 } } },
      },
    });
    const decoded = root
      .lookupType("R")
      .toObject(root.lookupType("R").decode(new Uint8Array(await res.arrayBuffer())), { longs: Number }) as any;
    expect(decoded.partial_success.rejected_spans).toBe(1);
  });
});

describe("failures answer the OTLP way", () => {
  test("malformed protobuf is 400 with a protobuf Status", async () => {
    const res = await post("/v1/traces", new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), {
      ...auth(),
      "content-type": "application/x-protobuf",
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    const status = statusType.decode(new Uint8Array(await res.arrayBuffer())) as any;
    expect(status.code).toBe(3);
    expect(status.message).toContain("not a valid protobuf");
  });

  test("malformed JSON is 400 with a JSON Status", async () => {
    const res = await post("/v1/logs", "{nope", { ...auth(), "content-type": "application/json" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 3, message: "body is not valid JSON", error: "body is not valid JSON" });
  });

  test("a wrong content type is 415", async () => {
    const res = await post("/v1/traces", "x", { ...auth(), "content-type": "text/plain" });
    expect(res.status).toBe(415);
    expect((await res.json()).message).toContain("application/x-protobuf");
  });

  test("missing or wrong credentials are 401", async () => {
    expect((await post("/v1/traces", "{}", { "content-type": "application/json" })).status).toBe(401);
    const res = await post("/v1/logs", new Uint8Array(0), {
      authorization: "Bearer nope",
      "content-type": "application/x-protobuf",
    });
    expect(res.status).toBe(401);
    expect((statusType.decode(new Uint8Array(await res.arrayBuffer())) as any).code).toBe(16);
  });

  test("a body over INGEST_MAX_BODY_BYTES is 413, declared or inflated by gzip", async () => {
    const big = new Uint8Array(4 * 1024 * 1024 + 1);
    expect((await post("/v1/traces", big, { ...auth(), "content-type": "application/x-protobuf" })).status).toBe(413);
    const bomb = gzipSync(new Uint8Array(5 * 1024 * 1024)); // ~5 KB on the wire
    expect(
      (
        await post("/v1/traces", bomb, {
          ...auth(),
          "content-type": "application/x-protobuf",
          "content-encoding": "gzip",
        })
      ).status,
    ).toBe(413);
  });

  test("over the rate limit is 429, storage down is 503, both with Retry-After", async () => {
    const deps = {
      js: stack.nats.js,
      topology: stack.nats.topology,
      keys: new KeyResolver(stack.database.db),
      logger: createLogger("silent"),
      maxBodyBytes: 1024 * 1024,
    };
    const body = JSON.stringify(request([chatSpan("9a".repeat(16), "09".repeat(8))]));
    const limited = createIngestApp({ ...deps, rateLimit: { perSecond: 1, burst: 1 } });
    const send = (app: ReturnType<typeof createIngestApp>) =>
      app.handle(
        new Request("http://ingest.test/v1/traces", {
          method: "POST",
          headers: { ...auth(), "content-type": "application/json" },
          body,
        }),
      );
    expect((await send(limited)).status).toBe(200);
    const second = await send(limited);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await second.json()).code).toBe(8);
    const down = createIngestApp({ ...deps, connected: () => false });
    const res = await send(down);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect((await res.json()).code).toBe(14);
  });

  test("GET is 405", async () => {
    const res = await stack.ingest.handle(new Request("http://ingest.test/v1/traces"));
    expect(res.status).toBe(405);
  });
});

describe("logs", () => {
  test("log records become events in the session of their trace, linked to the call", async () => {
    const logs = {
      resourceLogs: [
        {
          resource: { attributes: [kv("service.name", "notes-app")] },
          scopeLogs: [
            {
              scope: { name: "test" },
              logRecords: [
                {
                  timeUnixNano: "1760000000200000000",
                  severityNumber: 9,
                  eventName: "gen_ai.user.message",
                  traceId: "ff".repeat(16),
                  spanId: "08".repeat(8),
                  body: { kvlistValue: { values: [kv("content", "hello")] } },
                  attributes: [kv("gen_ai.provider.name", "openai")],
                },
                {
                  timeUnixNano: "1760000000300000000",
                  severityNumber: 17,
                  body: { stringValue: "tool crashed" },
                  attributes: [kv("session.id", "s-logs")],
                },
                { timeUnixNano: "0", body: { stringValue: "no session, no time" } },
              ],
            },
          ],
        },
      ],
    };
    const res = await post("/v1/logs", JSON.stringify(logs), { ...auth(), "content-type": "application/json" });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.partialSuccess.rejectedLogRecords).toBe("1");
    const rows = await waitFor(async () => {
      const r = await stack.database
        .sql`select name, session_id, trace_id, severity_number, body from events where session_id in (${"ff".repeat(16)}, 's-logs') order by timestamp`;
      return r.length === 2 ? r : null;
    });
    expect(rows.map((r: any) => ({ ...r }))).toEqual([
      {
        name: "gen_ai.user.message",
        session_id: "ff".repeat(16),
        trace_id: `${"ff".repeat(16)}-${"08".repeat(8)}`,
        severity_number: 9,
        body: { content: "hello" },
      },
      { name: "log", session_id: "s-logs", trace_id: null, severity_number: 17, body: { value: "tool crashed" } },
    ]);
  });
});

test("a protobuf string that is not UTF-8 is 400 (the spec requires valid UTF-8)", async () => {
  const good = encodeRequestFromJson("traces", request([chatSpan("7a".repeat(16), "0a".repeat(8))], "utf8-app"));
  const bad = new Uint8Array(good);
  const at = Buffer.from(bad).indexOf(Buffer.from("utf8-app"));
  bad[at] = 0xff; // a lone byte that no UTF-8 sequence starts with
  const res = await post("/v1/traces", bad, { ...auth(), "content-type": "application/x-protobuf" });
  expect(res.status).toBe(400);
});

test("a DSN names the service: the resource's service.name (the SDK's unknown_service default) does not override it", async () => {
  const dsn = await createApiKey(stack.database.db, {
    kind: "dsn-server",
    tenantId: tenant.tenantId,
    serviceName: "dsn-service",
  });
  const res = await post(
    "/v1/traces",
    JSON.stringify(request([chatSpan("7b".repeat(16), "0b".repeat(8))], "unknown_service:node")),
    { authorization: `Bearer ${dsn.key}`, "content-type": "application/json" },
  );
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({});
  await waitFor(async () => (await storedRows("dsn-service")).rows.length === 1);
  expect((await storedRows("unknown_service:node")).rows).toEqual([]);
});

test("with a telemetry key, spans whose resource has no service.name are refused", async () => {
  const body = {
    resourceSpans: [
      { resource: { attributes: [] }, scopeSpans: [{ spans: [chatSpan("7c".repeat(16), "0c".repeat(8))] }] },
    ],
  };
  const res = await post("/v1/traces", JSON.stringify(body), { ...auth(), "content-type": "application/json" });
  expect(res.status).toBe(200);
  expect((await res.json()).partialSuccess).toMatchObject({
    rejectedSpans: "1",
    errorMessage: expect.stringContaining("service.name"),
  });
});
