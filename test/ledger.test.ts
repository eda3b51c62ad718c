import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { createLedgerCounter, type LedgerCounter } from "@cellar/shared/ledger/counter";
import { upsertCounts } from "@cellar/shared/ledger/upsert";
import { createLogger } from "@cellar/shared/logger";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createIngestApp } from "../apps/ingest/src/app";
import { createOtlpGrpcServer } from "../apps/ingest/src/otlp/grpc/server";
import { createIngestPipeline } from "../apps/ingest/src/pipeline";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { reconcileOnce, settledHorizon } from "../apps/processor/src/ledger/reconcile";
import { evaluateLossMonitors } from "../apps/processor/src/monitors/loss";
import { exportSpans, modelCallSpan } from "./helpers/genai-spans";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * Issue 41, part 1 (docs/ledger.md): ingest counts what it accepts per door and refuses per
 * reason, the processor what it stores, SDK reports count once however often a batch is retried,
 * the API reads it, and the reconciliation balances, then reports a stored row deleted behind
 * the service's back.
 */
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let ledger: LedgerCounter;
let ingest: ReturnType<typeof createIngestApp>;
let limited: ReturnType<typeof createIngestApp>;
const logger = createLogger("silent");

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  await stack.startProcessor({ reconcile: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "ledger" });
  ledger = createLedgerCounter({ sql: stack.database.sql, logger, flushEveryMs: 50 });
  ingest = createIngestApp(ingestDeps(ledger));
  limited = createIngestApp({ ...ingestDeps(ledger), rateLimit: { perSecond: 0.001, burst: 1 } });
});
/** An ingest's deps on this stack, counting into `counter`. */
const ingestDeps = (counter: LedgerCounter) => ({
  js: stack.nats.js,
  topology: stack.nats.topology,
  keys: new KeyResolver(stack.database.db, { ttlMs: 200 }),
  logger,
  maxBodyBytes: 4 * 1024 * 1024,
  ledger: counter,
});

/** The reconciliation as it runs two minutes from now: every minute written so far is settled. */
const reconcileSettled = () =>
  reconcileOnce({
    sql: stack.database.sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger,
    options: { settleMs: 0, now: () => Date.now() + 120_000 },
  });

/** The service's ledger once `stored` items are stored (the counter flushed first). */
const ledgerWhenStored = (stored: number, service = "/books") =>
  waitFor(
    async () => {
      await ledger.flush();
      const l = await ledgerTotals(service);
      return l.totals.stored === stored ? l : null;
    },
    { what: `${stored} stored`, timeoutMs: 60_000 },
  );

afterAll(async () => {
  await ledger.stop();
  await stack.stop();
});

const post = (app: typeof ingest, path: string, body: unknown) =>
  app.handle(
    new Request(`http://ingest.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.telemetryKey}` },
      body: JSON.stringify(body),
    }),
  );
const trace = (sessionId: string) =>
  chatTrace({ sessionId, serviceName: "books", messages: [{ role: "user", content: "hi" }], reply: "hello" });
const report = (seq: number, requested: number, queueFull: number) => ({
  instance: "sdk-instance-1",
  seq,
  service_name: "books",
  counts: { requested, queue_full: queueFull, retries_exhausted: 0, refused: 1, sampled_out: 2 },
});

async function ledgerTotals(service = "/books") {
  const res = await stack.platformRequest(`/ledger${service}?window=1h`, { token: tenant.platformKey });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as { totals: Record<string, any>; series: Array<Record<string, any>>; stepSeconds: number };
}

test("accepted per door, refused per reason, stored, and SDK reports counted once under retries", async () => {
  for (const s of ["l-1", "l-2", "l-3"]) expect((await post(ingest, "/raw/traces", trace(s))).status).toBe(200);
  // A retry of the same body: stored once by JetStream, counted once.
  expect((await post(ingest, "/raw/traces", trace("l-1"))).status).toBe(200);
  expect((await post(ingest, "/raw/traces", { ...trace("l-4"), provider: 7 })).status).toBe(400);
  const batch = {
    items: [
      { type: "trace", body: trace("l-5") },
      { type: "trace", body: trace("l-6") },
      { type: "trace", body: { nope: true } },
    ],
    ledger: report(1, 10, 2),
  };
  const first = await post(ingest, "/raw/batch", batch);
  expect(first.status).toBe(200);
  expect(((await first.json()) as { status: string }).status).toBe("partial");
  // The SDK retries the whole batch: nothing more is accepted, the report adds nothing.
  expect((await post(ingest, "/raw/batch", batch)).status).toBe(200);
  // A later batch reports what grew; a malformed report is ignored and the batch answered as ever.
  expect(
    (await post(ingest, "/raw/batch", { items: [{ type: "trace", body: trace("l-7") }], ledger: report(2, 13, 3) }))
      .status,
  ).toBe(200);
  expect(
    (await post(ingest, "/raw/batch", { items: [{ type: "trace", body: trace("l-8") }], ledger: { instance: 1 } }))
      .status,
  ).toBe(200);
  // Rate limited: the second request of a bucket of one.
  expect((await post(limited, "/raw/traces", trace("l-9"))).status).toBe(200);
  expect((await post(limited, "/raw/traces", trace("l-10"))).status).toBe(429);

  const ledgerOf = await ledgerWhenStored(9);
  expect(ledgerOf.totals).toMatchObject({
    sdkRequested: 13,
    sdkDropped: { queue_full: 3, retries_exhausted: 0, refused: 1, sampled_out: 2 },
    accepted: { raw: 5, batch: 4, scores: 0, otlp: 0, grpc: 0 },
    stored: 9,
    deadLettered: 0,
    replayed: 0,
    inFlight: 0,
  });
  expect(ledgerOf.totals.loss).toBe(3 + 1 + 2);
  // A telemetry key names no service: what it had refused before a body named one is the
  // tenant's, under no service (1 invalid single body, 1 invalid item in each of the two tries
  // of the batch, 1 rate limited).
  const all = await ledgerTotals("");
  expect(all.totals.refused).toMatchObject({ invalid: 3, rate_limited: 1, forbidden: 0 });
  expect(all.totals.loss).toBe(3 + 1 + 2 + 4);
  expect(ledgerOf.stepSeconds).toBe(60);
  expect(ledgerOf.series).toHaveLength(60);
});

test("what a killed ingest held is recounted from INGEST: the books balance again", async () => {
  // An ingest whose counts never reach Postgres, as if killed (SIGKILL) before its flush.
  const lost = createLedgerCounter({ sql: stack.database.sql, logger, flushEveryMs: 3_600_000 });
  const killed = createIngestApp(ingestDeps(lost));
  for (const s of ["k-1", "k-2"]) expect((await post(killed, "/raw/traces", trace(s))).status).toBe(200);
  expect((await post(killed, "/raw/batch", { items: [{ type: "trace", body: trace("k-3") }] })).status).toBe(200);
  const before = await ledgerWhenStored(12);
  expect(before.totals.inFlight).toBe(-3);
  const verdicts = await reconcileSettled();
  expect(verdicts?.find((v) => v.tenantId === tenant.tenantId)).toMatchObject({ balanced: true, unaccounted: 0 });
  const after = await ledgerTotals();
  expect(after.totals).toMatchObject({ inFlight: 0, accepted: { raw: 7, batch: 5 } });
});

test("items an ingest without the ledger accepted (no Cellar-Door in INGEST) are counted accepted, unrecorded, as they are stored: nothing negative in flight, and a double count beside them is not hidden", async () => {
  // What the ingest of a release before the ledger published during an online upgrade: the
  // message alone, no door header, no `accepted` count.
  const receivedAt = new Date().toISOString();
  const doorless = (s: string) =>
    ({
      kind: "trace",
      messageId: `pre-ledger-${s}`,
      tenantId: tenant.tenantId,
      serviceName: "old-books",
      receivedAt,
      payload: chatTrace({
        sessionId: s,
        serviceName: "old-books",
        messages: [{ role: "user", content: "hi" }],
        reply: "a",
      }),
    }) as unknown as IngestMessage;
  // One of them the processor of that release had stored already, counting nothing: its row is
  // there, written from this very copy, so the new processor counts nothing for it either.
  const old = doorless("old-0");
  await writeIngestBatch(stack.database.sql, [old]);
  for (const message of [old, doorless("old-1"), doorless("old-2")])
    await publish(stack.nats.js, stack.nats.topology, ingestStream, message, { msgID: message.messageId });
  const before = await ledgerWhenStored(2, "/old-books");
  // Before: stored 2, accepted 0, in flight -2 in the API's totals.
  expect(before.totals).toMatchObject({ inFlight: 0, stored: 2, accepted: { unrecorded: 2 } });
  const verdict = (await reconcileSettled())?.find((v) => v.tenantId === tenant.tenantId);
  expect(verdict).toMatchObject({ balanced: true, unaccounted: 0, problems: [] });
  expect(verdict?.redelivered).toBeUndefined();
  // A real double count in the same minute (a duplicate copy counted stored twice, written here
  // by hand): reported as counted twice. Before, it was taken for one of INGEST's three door-less
  // items (`unrecordedAccepted` 3) and said nothing.
  const twice = {
    tenant_id: tenant.tenantId,
    service_name: "old-books",
    minute: new Date(Math.floor(Date.parse(receivedAt) / 60_000) * 60_000).toISOString(),
    stage: "stored",
    reason: "duplicate",
    count: 1,
  };
  await upsertCounts(stack.database.sql, [twice]);
  try {
    const again = (await reconcileSettled())?.find((v) => v.tenantId === tenant.tenantId);
    expect(again).toMatchObject({ balanced: true, unaccounted: 0, redelivered: 1 });
    const [check] = await stack.database.sql`select details from ledger_checks where tenant_id = ${tenant.tenantId}`;
    expect(check.details).toMatchObject({ redelivered: 1 });
  } finally {
    await upsertCounts(stack.database.sql, [{ ...twice, count: -1 }]);
  }
});

test("a loss monitor alerts from the ledger's counts, and its monitor.triggered event is published", async () => {
  const created = await stack.platformRequest("/monitors", {
    token: tenant.platformKey,
    method: "POST",
    body: JSON.stringify({ service_name: "books", name: "losing", metric: "loss", window_seconds: 3600, threshold: 5 }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  // Dropped by the SDK in this service: 3 queue full + 1 refused + 2 sampled out = 6 > 5.
  await evaluateLossMonitors({ sql: stack.database.sql, js: stack.nats.js, topology: stack.nats.topology, logger });
  const [monitor] = await stack.database.sql`select state from monitors where id = ${id}`;
  expect(monitor.state).toBe("alert");
  const [event] = await stack.database.sql`
    select event_type, value, published_at from monitor_events where monitor_id = ${id} order by seq desc limit 1`;
  expect(event).toMatchObject({ event_type: "monitor.triggered", value: 6 });
  expect(event.published_at).not.toBeNull();
});

test("the reconciliation balances, then reports a stored row deleted behind the service's back", async () => {
  const balanced = await reconcileSettled();
  expect(balanced?.find((v) => v.tenantId === tenant.tenantId)).toMatchObject({ balanced: true, unaccounted: 0 });

  await stack.database.sql`delete from traces where tenant_id = ${tenant.tenantId} and session_id = 'l-2'`;
  const verdicts = await reconcileSettled();
  expect(verdicts?.find((v) => v.tenantId === tenant.tenantId)).toMatchObject({
    balanced: false,
    missingTraceRows: 1,
    problems: ["1 stored traces have no row"],
  });
  const l = await ledgerTotals();
  expect(l).toMatchObject({ reconciliation: { balanced: false, problems: ["1 stored traces have no row"] } });
});

test("the dashboard serves its Ledger page", async () => {
  const res = await stack.platform.handle(new Request("http://platform.test/ledger?window=1h"));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/html");
});

test("any role reads the ledger of its projects' services, per hour over 24 h; another tenant sees nothing", async () => {
  const [project] = await stack.database.sql<{ id: string }[]>`
    select project_id as id from trace_services where tenant_id = ${tenant.tenantId} and name = 'books'`;
  const viewer = await createUser(stack.database.db, {
    tenantId: tenant.tenantId,
    email: "viewer@ledger.test",
    role: "viewer",
    projectIds: [project.id],
  });
  const viewerKey = (await createApiKey(stack.database.db, { kind: "platform", userId: viewer.id })).key;
  const res = await stack.platformRequest("/ledger/books?window=24h", { token: viewerKey });
  expect(res.status).toBe(200);
  const day = (await res.json()) as { stepSeconds: number; series: unknown[]; totals: { stored: number } };
  expect(day.stepSeconds).toBe(3600);
  expect(day.series).toHaveLength(24);
  expect(day.totals.stored).toBeGreaterThan(0);
  // Refusals under no service are the tenant's admins' (a viewer sees its services only).
  const all = await (await stack.platformRequest("/ledger?window=1h", { token: viewerKey })).json();
  expect(all.totals.refused.rate_limited).toBe(0);
  const other = await bootstrapTenant(stack.database.db, { name: "other", email: "o@other.test" });
  expect((await stack.platformRequest("/ledger/books", { token: other.platformKey })).status).toBe(404);
  const empty = await (await stack.platformRequest("/ledger?window=1h", { token: other.platformKey })).json();
  expect(empty.totals.stored).toBe(0);
  expect((await stack.platformRequest("/ledger/books?window=2d", { token: viewerKey })).status).toBe(400);
});

test("OTLP over HTTP and over gRPC are counted accepted, each under its own door", async () => {
  const pipeline = createIngestPipeline(ingestDeps(ledger));
  const grpc = createOtlpGrpcServer({ pipeline, maxMessageBytes: 4 * 1024 * 1024, logger });
  const grpcPort = await grpc.listen(0, "127.0.0.1");
  const http = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => ingest.handle(req) });
  try {
    const call = (sessionId: string) => ({
      sessionId,
      system: "Be brief.",
      user: "Where is my parcel?",
      answer: "On its way.",
      inputTokens: 12,
      outputTokens: 4,
    });
    const spans = (s: string) => [modelCallSpan("genai", "openai", call(s))];
    const otlp = { credential: tenant.telemetryKey, serviceName: "otlp-books" };
    await exportSpans({
      ...otlp,
      url: `http://127.0.0.1:${http.port}/v1/traces`,
      encoding: "protobuf",
      spans: spans("o-1"),
    });
    await exportSpans({ ...otlp, url: `http://127.0.0.1:${grpcPort}`, encoding: "grpc", spans: spans("g-1") });
    await exportSpans({ ...otlp, url: `http://127.0.0.1:${grpcPort}`, encoding: "grpc", spans: spans("g-2") });
    const l = await ledgerWhenStored(3, "/otlp-books");
    expect(l.totals.accepted).toMatchObject({ otlp: 1, grpc: 2, raw: 0, batch: 0 });
  } finally {
    http.stop(true);
    await grpc.stop(1_000);
  }
});

test("nothing is settled past the oldest message a lane of INGEST has not acknowledged", async () => {
  await stack.processor!.stop();
  const jsm = await stack.nats.js.jetstreamManager();
  const before = Date.now();
  expect((await post(ingest, "/raw/traces", trace("h-1"))).status).toBe(200);
  const horizon = await settledHorizon(jsm, stack.nats.topology, Date.now() + 60_000);
  expect(horizon).not.toBeNull();
  expect(horizon!).toBeGreaterThanOrEqual(before - 1_000);
  expect(horizon!).toBeLessThanOrEqual(Date.now());
  await stack.startProcessor({ reconcile: false });
  await waitFor(async () => (await settledHorizon(jsm, stack.nats.topology, 42)) === 42, {
    what: "every lane acknowledged",
    timeoutMs: 60_000,
  });
});
