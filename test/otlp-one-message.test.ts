import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createLedgerCounter, type LedgerCounter } from "@cellar/shared/ledger/counter";
import { createLogger } from "@cellar/shared/logger";
import { INGEST_DOOR_HEADER, ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import { consumerBacklog } from "@cellar/shared/nats/consume/lanes";
import { laneOf, laneToken } from "@cellar/shared/nats/lanes";
import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { createIngestApp } from "../apps/ingest/src/app";
import { createOtlpGrpcServer } from "../apps/ingest/src/otlp/grpc/server";
import { createIngestPipeline } from "../apps/ingest/src/pipeline";
import { createPublishing } from "../apps/ingest/src/publish";
import { reconcileOnce } from "../apps/processor/src/ledger/reconcile";
import { exportSpans, modelCallSpan } from "./helpers/genai-spans";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * One INGEST message per OTLP request (issue 36, docs/analyse-once.md "One INGEST message per
 * request"): the spans an export maps to travel in one batch message (split in order only past
 * the stream's maximum payload), over HTTP and gRPC alike, each under its door; a retry is dropped
 * by JetStream, and a copy of the message under another id writes nothing new.
 */
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let ledger: LedgerCounter;
const logger = createLogger("silent");

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 60, startProcessor: false });
  await stack.startProcessor({ reconcile: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "otlp-once" });
  ledger = createLedgerCounter({ sql: stack.database.sql, logger, flushEveryMs: 50 });
});
afterAll(async () => {
  await ledger.stop();
  await stack.stop();
});

const deps = () => ({
  js: stack.nats.js,
  topology: stack.nats.topology,
  keys: new KeyResolver(stack.database.db, { ttlMs: 200 }),
  logger,
  maxBodyBytes: 4 * 1024 * 1024,
  ledger,
});

const kv = (key: string, value: string | number) => ({
  key,
  value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
});
/** A model-call span of trace `traceId`, in session `session`; `model: ""` makes one the rules refuse. */
const span = (traceId: string, session: string, model = "claude-sonnet-4-5") => ({
  traceId,
  spanId: traceId.slice(0, 16),
  name: "chat",
  kind: 3,
  startTimeUnixNano: "1760000000000000000",
  endTimeUnixNano: "1760000001000000000",
  attributes: [
    kv("gen_ai.operation.name", "chat"),
    kv("gen_ai.provider.name", "anthropic"),
    kv("gen_ai.request.model", model),
    kv("gen_ai.response.model", model),
    kv("gen_ai.usage.input_tokens", 12),
    kv("gen_ai.usage.output_tokens", 4),
    kv("gen_ai.conversation.id", session),
    kv("gen_ai.input.messages", JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Hi" }] }])),
  ],
});
const exportOf = (spans: unknown[], service = "otlp-once") => ({
  resourceSpans: [{ resource: { attributes: [kv("service.name", service)] }, scopeSpans: [{ spans }] }],
});
/** `n` spans of session `session`, each its own trace (trace ids from `tag`, two hex digits). */
const spansOf = (tag: string, session: string, n: number) =>
  Array.from({ length: n }, (_, i) => span(`${tag}${String(i).padStart(30, "0")}`, session));

const post = (app: ReturnType<typeof createIngestApp>, body: Uint8Array) =>
  app.handle(
    new Request("http://ingest.test/v1/traces", {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/x-protobuf" },
      body: body as BodyInit,
    }),
  );
const lastSeq = async () => (await stack.nats.jsm.streams.info(stack.nats.topology.ingestStream)).state.last_seq;
const messagesAfter = async (before: number) => {
  const out = [];
  for (let seq = before + 1; seq <= (await lastSeq()); seq++)
    out.push((await stack.nats.jsm.streams.getMessage(stack.nats.topology.ingestStream, { seq }))!);
  return out;
};
const traces = async (session: string) =>
  Number(
    (
      await stack.database
        .sql`select count(*)::int as n from traces where tenant_id = ${tenant.tenantId} and session_id = ${session}`
    )[0].n,
  );
const drained = () =>
  waitFor(async () => (await consumerBacklog(stack.nats.jsm, ingestStream, stack.nats.topology)) === 0, {
    what: "INGEST consumed",
    timeoutMs: 20_000,
  });
/** The ledger's `accepted` of the service per door, once the counter flushed. */
async function accepted(service = "otlp-once"): Promise<Record<string, number>> {
  await ledger.flush();
  const res = await stack.platformRequest(`/ledger/${service}?window=1h`, { token: tenant.platformKey });
  expect(res.status).toBe(200);
  return ((await res.json()) as { totals: { accepted: Record<string, number> } }).totals.accepted;
}
type Batch = {
  kind: string;
  messageId: string;
  tenantId: string;
  items: Array<{ kind: string; messageId: string; serviceName: string }>;
};

test("an OTLP/HTTP request of N spans is one INGEST message; a retry adds none, a copy under another id no row", async () => {
  const ingest = createIngestApp(deps());
  const before = await lastSeq();
  // 24 spans the rules accept and one they refuse (no model): partial success answers as before.
  const body = encodeRequestFromJson(
    "traces",
    exportOf([...spansOf("a1", "http-once", 24), span("a2".repeat(16), "http-once", "")]),
  );
  const res = await post(ingest, body);
  expect(res.status).toBe(200);
  expect(new Uint8Array(await res.arrayBuffer()).byteLength).toBeGreaterThan(0); // partial_success
  const [message, ...more] = await messagesAfter(before);
  expect(more).toEqual([]);
  expect(message.subject).toBe(
    `${stack.nats.topology.subjectPrefix}ingest.batch.${laneToken(laneOf(tenant.tenantId))}`,
  );
  expect(message.header?.get(INGEST_DOOR_HEADER)).toBe("otlp");
  const batch = message.json<Batch>();
  expect(batch).toMatchObject({ kind: "batch", tenantId: tenant.tenantId });
  expect(batch.items).toHaveLength(24);
  expect(new Set(batch.items.map((i) => i.messageId)).size).toBe(24);
  expect(batch.items.every((i) => i.kind === "trace" && i.serviceName === "otlp-once")).toBe(true);
  await waitFor(async () => (await traces("http-once")) === 24, { what: "the request's 24 traces" });
  await waitFor(async () => (await accepted()).otlp === 24, { what: "24 accepted under otlp" });

  // The exporter's retry of the same request: the same message id, dropped by JetStream, not counted.
  expect((await post(ingest, body)).status).toBe(200);
  expect(await lastSeq()).toBe(before + 1);
  // A copy of the message under another id (a replay): written again by natural keys, nothing new.
  await stack.nats.js.publish(message.subject, message.data, {
    msgID: `${batch.items[0].messageId}:again`,
    headers: ingestCheckedHeaders(),
  });
  await drained();
  expect(await traces("http-once")).toBe(24);
  expect((await accepted()).otlp).toBe(24);
});

test("an OTLP/gRPC export of N spans (the SDK's own exporter) is one INGEST message under door grpc", async () => {
  const grpc = createOtlpGrpcServer({
    pipeline: createIngestPipeline(deps()),
    maxMessageBytes: 4 * 1024 * 1024,
    logger,
  });
  const port = await grpc.listen(0, "127.0.0.1");
  try {
    const before = await lastSeq();
    const call = {
      sessionId: "grpc-once",
      system: "Be brief.",
      user: "Where?",
      answer: "Here.",
      inputTokens: 5,
      outputTokens: 2,
    };
    const spans = Array.from({ length: 30 }, () => modelCallSpan("genai", "openai", call));
    const { rejected } = await exportSpans({
      url: `http://127.0.0.1:${port}`,
      credential: tenant.telemetryKey,
      encoding: "grpc",
      serviceName: "otlp-once",
      spans,
    });
    expect(rejected).toBe(0);
    const messages = await messagesAfter(before);
    expect(messages).toHaveLength(1);
    expect(messages[0].header?.get(INGEST_DOOR_HEADER)).toBe("grpc");
    expect(messages[0].json<Batch>().items).toHaveLength(30);
    await waitFor(async () => (await traces("grpc-once")) === 30, { what: "the export's 30 traces" });
    await waitFor(async () => (await accepted()).grpc === 30, { what: "30 accepted under grpc" });
  } finally {
    await grpc.stop(1_000);
  }
});

test("a request past the maximum payload is split in order; every part stored before the 200, its retry dropped", async () => {
  const base = createIngestPipeline(deps());
  // A small maximum payload (main.ts's is INGEST_MAX_BODY_BYTES + 64 KiB), to split 40 spans.
  const { storeAll } = createPublishing({
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger,
    now: () => new Date(),
    maxBodyBytes: 4 * 1024 * 1024,
    publishTimeoutMs: 5_000,
    maxInFlight: 1_000,
    maxMessageBytes: 8 * 1024,
  });
  const ingest = createIngestApp(deps(), { ...base, storeAll });
  const before = await lastSeq();
  const body = encodeRequestFromJson("traces", exportOf(spansOf("b1", "split-once", 40)));
  expect((await post(ingest, body)).status).toBe(200);
  const messages = await messagesAfter(before);
  expect(messages.length).toBeGreaterThan(1);
  expect(messages.length).toBeLessThan(40);
  const items = messages.flatMap((m) => {
    expect(m.data.byteLength).toBeLessThanOrEqual(8 * 1024);
    expect(m.header?.get(INGEST_DOOR_HEADER)).toBe("otlp");
    return m.json<Batch>().items;
  });
  expect(items).toHaveLength(40);
  await waitFor(async () => (await traces("split-once")) === 40, { what: "the 40 traces" });
  // In order: the i-th item is the i-th span.
  expect(items.map((i) => (i as unknown as { payload: { trace_id: string } }).payload.trace_id)).toEqual(
    spansOf("b1", "split-once", 40).map((s) => `${s.traceId}-${s.spanId}`),
  );
  expect((await post(ingest, body)).status).toBe(200);
  expect(await lastSeq()).toBe(before + messages.length);
});

test("an OTLP/HTTP logs request of N records is one INGEST message of event items; a copy adds no row", async () => {
  const ingest = createIngestApp(deps());
  const before = await lastSeq();
  const records = Array.from({ length: 15 }, (_, i) => ({
    timeUnixNano: String(1_760_000_000_000_000_000n + BigInt(i) * 1_000_000n),
    severityNumber: 9,
    body: { stringValue: `step ${i}` },
    attributes: [kv("session.id", "logs-once")],
  }));
  const logs = {
    resourceLogs: [
      { resource: { attributes: [kv("service.name", "otlp-once")] }, scopeLogs: [{ logRecords: records }] },
    ],
  };
  const res = await ingest.handle(
    new Request("http://ingest.test/v1/logs", {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
      body: JSON.stringify(logs),
    }),
  );
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({});
  const messages = await messagesAfter(before);
  expect(messages).toHaveLength(1);
  expect(messages[0].header?.get(INGEST_DOOR_HEADER)).toBe("otlp");
  const batch = messages[0].json<Batch>();
  expect(batch.items.map((i) => i.kind)).toEqual(Array(15).fill("event"));
  const events = async () =>
    Number(
      (
        await stack.database
          .sql`select count(*)::int as n from events where tenant_id = ${tenant.tenantId} and session_id = 'logs-once'`
      )[0].n,
    );
  await waitFor(async () => (await events()) === 15, { what: "the request's 15 events" });
  await stack.nats.js.publish(messages[0].subject, messages[0].data, {
    msgID: `${batch.messageId}:again`,
    headers: ingestCheckedHeaders(),
  });
  await drained();
  expect(await events()).toBe(15);
});

test("what a killed ingest held of an OTLP request is recounted from INGEST per item, under door otlp", async () => {
  // An ingest whose counts never reach Postgres, as if killed before its flush.
  const lost = createLedgerCounter({ sql: stack.database.sql, logger, flushEveryMs: 3_600_000 });
  const killed = createIngestApp({ ...deps(), ledger: lost });
  const body = encodeRequestFromJson("traces", exportOf(spansOf("c1", "lost-once", 12), "otlp-lost"));
  expect((await post(killed, body)).status).toBe(200);
  await waitFor(async () => (await traces("lost-once")) === 12, { what: "the request's 12 traces" });
  await drained();
  expect((await accepted("otlp-lost")).otlp).toBe(0);
  await reconcileOnce({
    sql: stack.database.sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger,
    options: { settleMs: 0, now: () => Date.now() + 120_000 },
  });
  expect(await accepted("otlp-lost")).toMatchObject({ otlp: 12, grpc: 0 });
});
