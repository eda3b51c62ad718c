// Issue 41's proof for the ledger, with the TypeScript SDK and the real OpenTelemetry gRPC
// exporters (test/python-sdk.test.ts runs the same with the Python SDK): ingest, the processor
// and the platform as separate processes on a Postgres and a nats-server of this file's own; the
// reconciliation every second. One run with every fault the ledger must account for:
// - SDK drops: a client with a queue of 5 asked to send 20 (15 dropped, queue full);
// - refusals: an invalid item in a batch, an oversized gRPC export (RESOURCE_EXHAUSTED);
// - a poison message: an event the database refuses, dead-lettered, then replayed through the API;
// - ingest SIGKILLed mid-run and started again while an SDK client sends (it retries);
// - traces and log records through the OTLP/gRPC door, with the SDK's own exporters.
// Then the books balance over every minute of the run, each stage counted as the clients saw it,
// and a trace row deleted behind the service's back is reported.
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import type postgres from "postgres";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { createDatabase } from "@cellar/shared/db/client";
import { freePort } from "../scripts/infra/ports";
import { Cellar, type FlushResult, type TraceInput } from "../sdks/typescript/src/index";
import { startAppProcesses } from "./helpers/app-processes";
import { exportCallWithMessageLogs, exportSpans, type ModelCall, modelCallSpan } from "./helpers/genai-spans";
import { startOwnInfra } from "./helpers/own-infra";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

const SERVICE = "ledger-e2e";
let infra: Awaited<ReturnType<typeof startOwnInfra>>;
let sql: postgres.Sql;
let stack: Awaited<ReturnType<typeof startAppProcesses>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let dsn: string;
let grpcUrl: string;

beforeAll(async () => {
  infra = await startOwnInfra("ledger-e2e");
  sql = infra.sql;
  const grpcPort = await freePort();
  grpcUrl = `http://127.0.0.1:${grpcPort}`;
  stack = await startAppProcesses(infra.databaseUrl, ["ingest", "processor", "platform"], {
    env: {
      NATS_URL: infra.natsUrl,
      LEDGER_RECONCILE_SECONDS: "1",
      INGEST_RATE_LIMIT_PER_SECOND: "0",
      INGEST_GRPC_PORT: String(grpcPort),
      INGEST_MAX_BODY_BYTES: String(1024 * 1024),
    },
  });
  const database = createDatabase(infra.databaseUrl, { max: 1 });
  tenant = await bootstrapTenant(database.db, { name: "ledger-e2e" });
  dsn = (
    await createApiKey(database.db, {
      kind: "dsn-server",
      tenantId: tenant.tenantId,
      serviceName: SERVICE,
      endpoint: stack.ingestUrl,
    })
  ).key;
  await database.close();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await infra?.stop();
});

const platform = async (path: string, body?: unknown) => {
  const res = await fetch(`${stack.platformUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Token ${tenant.platformKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

const sdkTrace = (sessionId: string, content: string): TraceInput => {
  const {
    service_name: _,
    provider: __,
    ...t
  } = chatTrace({
    sessionId,
    messages: [{ role: "user", content }],
    reply: "ok",
  });
  return t as unknown as TraceInput;
};

const call = (sessionId: string, i: number): ModelCall => ({
  sessionId,
  system: "You answer questions about parcels.",
  user: `Where is parcel ${i}?`,
  answer: `Parcel ${i} is out for delivery.`,
  inputTokens: 30 + i,
  outputTokens: 7 + i,
});

const grpcSpans = (sessionIds: string[], padding?: string) =>
  exportSpans({
    url: grpcUrl,
    credential: tenant.telemetryKey,
    encoding: "grpc",
    serviceName: SERVICE,
    spans: sessionIds.map((id, i) => {
      const span = modelCallSpan("genai", "openai", call(id, i));
      return padding ? { ...span, attributes: { ...span.attributes, padding } } : span;
    }),
  });

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

test("TypeScript SDK and OTLP/gRPC exporters through drops, refusals, a poison message replayed and an ingest kill: the books balance, then a deleted row is reported", async () => {
  const sdkResults: FlushResult[] = [];

  // SDK drops: a queue of 5, asked for 20.
  const small = new Cellar({ dsn, serverless: true, maxQueueItems: 5 });
  for (let i = 0; i < 20; i++) small.event({ name: "full", session_id: "le-full", attributes: { i } });
  sdkResults.push(await small.flush({ timeoutMs: 60_000 }));
  expect(sdkResults[0]).toMatchObject({ sent: 5, dropped: 15, pending: 0 });

  // The gRPC door: spans, and a call with its messages as log records, by the SDK's exporters.
  expect(await grpcSpans(["le-grpc-1", "le-grpc-2", "le-grpc-3"])).toEqual({ rejected: 0 });
  await exportCallWithMessageLogs({
    baseUrl: grpcUrl,
    credential: tenant.telemetryKey,
    encoding: "grpc",
    serviceName: SERVICE,
    call: call("le-grpc-logs", 9),
  });
  // Refused: an oversized gRPC export (over INGEST_MAX_BODY_BYTES), an invalid item in a batch.
  const oversized = await grpcSpans(["le-grpc-big"], "x".repeat(1_200_000)).then(
    () => null,
    (err: grpc.ServiceError) => err.code,
  );
  expect(oversized).toBe(grpc.status.RESOURCE_EXHAUSTED);
  const invalid = new Cellar({ dsn, serverless: true });
  invalid.event({ name: "bad", session_id: "le-invalid", severity_number: 99 });
  invalid.event({ name: "good", session_id: "le-invalid" });
  sdkResults.push(await invalid.flush({ timeoutMs: 60_000 }));
  expect(sdkResults[1]).toMatchObject({ sent: 1, refused: 1, pending: 0 });
  // The client learnt of the refusal from the answer: its next batch reports it.
  invalid.event({ name: "after", session_id: "le-invalid" });
  sdkResults.push(await invalid.flush({ timeoutMs: 60_000 }));

  // A poison message: an event the database refuses (a data exception: dead-lettered at once).
  await sql.unsafe(`
    create or replace function cellar_test_poison() returns trigger language plpgsql as $$
    begin
      if new.name = 'poison' then raise exception 'poison event' using errcode = '22023'; end if;
      return new;
    end $$;
    create trigger cellar_test_poison before insert on events for each row execute function cellar_test_poison();`);
  const poisoned = new Cellar({ dsn, serverless: true });
  poisoned.event({ name: "poison", session_id: "le-poison" });
  sdkResults.push(await poisoned.flush({ timeoutMs: 60_000 }));
  expect(sdkResults[3]).toMatchObject({ sent: 1, pending: 0 });
  await waitFor(async () => ((await platform("/dead-letters")).body.count === 1 ? true : null), {
    what: "the poison message dead-lettered",
    timeoutMs: 60_000,
  });
  await sql.unsafe("drop trigger cellar_test_poison on events");
  expect(await platform("/dead-letters/replay", {})).toMatchObject({ status: 200, body: { replayed: 1 } });

  // Ingest SIGKILLed while a client sends traces, then started again: the client retries.
  const steady = new Cellar({ dsn, flushIntervalMs: 100, retryBaseMs: 200, retryMaxMs: 2_000, maxRetries: 20 });
  const sending = (async () => {
    for (let i = 0; i < 60; i++) {
      steady.trace(sdkTrace(`le-steady-${i % 6}`, `question ${i}`));
      await Bun.sleep(50);
    }
  })();
  await Bun.sleep(1_000);
  await stack.kill("ingest");
  await Bun.sleep(1_500);
  await stack.start("ingest");
  await sending;
  sdkResults.push(await steady.shutdown({ timeoutMs: 120_000 }));
  expect(sdkResults[4]).toMatchObject({ sent: 60, dropped: 0, refused: 0, pending: 0 });
  expect(sdkResults[4].retried).toBeGreaterThan(0); // the kill was felt
  // More through gRPC after the restart.
  expect(await grpcSpans(["le-grpc-4", "le-grpc-5"])).toEqual({ rejected: 0 });
  // Large requests, worked on ingest's offload thread (INGEST_OFFLOAD_MIN_BYTES, default 64 KiB):
  // a 120-span gRPC export and a 100-trace SDK batch of about 200 KB each, counted as any other.
  const large = Array.from({ length: 120 }, (_, i) => `le-grpc-large-${i % 12}`);
  expect(await grpcSpans(large, "p".repeat(1_200))).toEqual({ rejected: 0 });
  const bulky = new Cellar({ dsn, serverless: true, maxBatchItems: 100 });
  for (let i = 0; i < 100; i++) bulky.trace(sdkTrace(`le-bulky-${i % 10}`, `question ${i} ${"q".repeat(1_500)}`));
  sdkResults.push(await bulky.flush({ timeoutMs: 60_000 }));
  expect(sdkResults[5]).toMatchObject({ sent: 100, dropped: 0, refused: 0, pending: 0 });
  const offloaded = (await (await fetch(`${stack.ingestUrl}/metrics`)).text())
    .split("\n")
    .filter((l) => l.startsWith("cellar_ingest_offload_jobs_total{") && l.includes('outcome="done"'));
  expect(offloaded.map((l) => /task="(\w+)"/.exec(l)![1]).sort()).toEqual(["batch", "otlp"]);
  const lastSentAt = Date.now();

  await waitFor(
    async () => {
      const [r] = await sql<{ n: number }[]>`
        select count(*)::int as n from events where tenant_id = ${tenant.tenantId} and name = 'poison'`;
      return r.n === 1 ? true : null;
    },
    { what: "the replayed poison event stored", timeoutMs: 60_000 },
  );

  // The books over every minute of the run (tenant-wide: a refused request names no service).
  const books = async (balanced: boolean) => {
    const r = await platform("/ledger?window=1h");
    const rec = r.body.reconciliation;
    return r.status === 200 && rec && Date.parse(rec.to) > lastSentAt && rec.balanced === balanced ? r.body : null;
  };
  const ledger = await waitFor(() => books(true), {
    what: "the books balanced over every minute of the run",
    timeoutMs: 180_000,
    intervalMs: 1_000,
  });
  const t = ledger.totals;
  console.log(
    `ledger e2e totals: ${JSON.stringify(t)}; the client sending through the kill retried ${sdkResults[4].retried}`,
  );
  const sdkSent = sdkResults.reduce((n, r) => n + r.sent, 0);
  expect(t.inFlight).toBe(0);
  expect(t.sdkDropped.queue_full).toBe(15);
  expect(t.sdkDropped.refused).toBe(1);
  expect(t.sdkRequested).toBe(20 + 3 + 1 + 60 + 100);
  expect(t.accepted.batch).toBe(sdkSent);
  expect(t.accepted.grpc).toBeGreaterThanOrEqual(5 + 1 + 3 + 120); // spans, the logged call and its 3 records, the large export
  expect(t.refused.invalid).toBeGreaterThanOrEqual(1);
  expect(t.refused.too_large).toBeGreaterThanOrEqual(1);
  expect([t.deadLettered, t.replayed]).toEqual([1, 1]);
  expect(t.stored).toBe(sum(t.accepted) - t.deadLettered + t.replayed);
  expect(t.loss).toBe(sum(t.sdkDropped) + sum(t.refused) + t.deadLettered - t.replayed);
  // Each stored item has its row: the ledger's stored against Postgres.
  const [rows] = await sql<{ traces: number; events: number }[]>`
    select (select count(*)::int from traces where tenant_id = ${tenant.tenantId}) as traces,
           (select count(*)::int from events where tenant_id = ${tenant.tenantId}) as events`;
  expect(rows.traces + rows.events).toBe(t.stored);

  // The deliberately unbalanced book: a stored trace row deleted behind the service's back.
  const deleted = await sql`
    delete from traces where id = (select id from traces where tenant_id = ${tenant.tenantId} order by received_at limit 1)
    returning id`;
  expect(deleted.length).toBe(1);
  const unbalanced = await waitFor(() => books(false), {
    what: "the reconciliation reporting the deleted row",
    timeoutMs: 60_000,
    intervalMs: 1_000,
  });
  expect(unbalanced.reconciliation.problems).toEqual(["1 stored traces have no row"]);
  expect(stack.output("processor")).toContain("ledger does not balance");
}, 420_000);
