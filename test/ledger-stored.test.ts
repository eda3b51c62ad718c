// The ledger's `stored`, counted with the rows (issue 41, docs/ledger.md "Stored, counted with the
// rows"): the INGEST consumer's handler on a real Postgres and NATS, given the same deliveries
// again as JetStream gives them after a lost acknowledgement. Before, `stored` was counted in
// memory after the write and flushed later: a batch written again was counted again (the first
// test fails on that code with 2x), and a processor killed before its flush lost the count
// (test/faults-ledger-kill.test.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { JsMsg } from "@nats-io/jetstream";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createLedgerCounter, type LedgerCounter } from "@cellar/shared/ledger/counter";
import { createLogger } from "@cellar/shared/logger";
import type { Delivery } from "@cellar/shared/nats/consume";
import { INGEST_DOOR_HEADER } from "@cellar/shared/nats/catalogue";
import { DL } from "@cellar/shared/nats/dead-letters";
import type { IngestMessage, IngestStreamMessage } from "@cellar/shared/payloads";
import { ingestHandler } from "../apps/processor/src/consumers/ingest";
import { ActivityCoalescer } from "../apps/processor/src/maturation/coalesce";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, type TestStack } from "./helpers/stack";

let stack: TestStack;
let tenantId: string;
let ledger: LedgerCounter;
let coalescer: ActivityCoalescer;
let handle: ReturnType<typeof ingestHandler>;
const observed = new Map<string, number>();
const logger = createLogger("silent");

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenantId = (await bootstrapTenant(stack.database.db, { name: "stored" })).tenantId;
  ledger = createLedgerCounter({
    sql: stack.database.sql,
    logger,
    flushEveryMs: 60_000,
    observe: (stage, reason, n) => observed.set(`${stage}/${reason}`, (observed.get(`${stage}/${reason}`) ?? 0) + n),
  });
  coalescer = new ActivityCoalescer({
    js: stack.nats.js,
    topology: stack.nats.topology,
    windowSeconds: 1,
    logger,
    minIntervalMs: 0,
  });
  handle = ingestHandler(stack.database.sql, coalescer, ledger, { maxDeliver: 5 });
});

afterAll(async () => {
  await ledger?.stop();
  await stack?.stop();
});

const at = (ms: number) => new Date(ms).toISOString();

function trace(service: string, id: string, receivedAt: string): IngestMessage {
  return {
    kind: "trace",
    tenantId,
    serviceName: service,
    messageId: `mt-${id}`,
    receivedAt,
    payload: chatTrace({
      sessionId: `s-${service}`,
      serviceName: service,
      messages: [{ role: "user", content: id }],
      reply: "ok",
      extra: { trace_id: id },
    }),
  } as unknown as IngestMessage;
}

function event(service: string, id: string, receivedAt: string): IngestMessage {
  return {
    kind: "event",
    tenantId,
    serviceName: service,
    messageId: `me-${id}`,
    receivedAt,
    payload: { name: "click", session_id: `s-${service}`, timestamp: receivedAt },
  } as unknown as IngestMessage;
}

function score(service: string, key: string, receivedAt: string): IngestMessage {
  return {
    kind: "score",
    tenantId,
    serviceName: service,
    messageId: `ms-${key}`,
    receivedAt,
    payload: { name: "helpful", value: 1, session_id: `s-${service}`, source: "api", idempotency_key: key },
  } as unknown as IngestMessage;
}

/**
 * A delivery as the consume runtime hands it over (deliveryCount > 1: JetStream gave it again),
 * with the door ingest published it through (`door` null: none, as an ingest without the ledger).
 */
function delivery(
  value: IngestMessage,
  deliveryCount = 1,
  replayOf?: number,
  door: string | null = "batch",
): Delivery<IngestStreamMessage> {
  const h = natsHeaders();
  if (door !== null) h.set(INGEST_DOOR_HEADER, door);
  if (replayOf !== undefined) h.set(DL.replayOf, String(replayOf));
  return { value, msg: { seq: 1, info: { deliveryCount }, headers: h } as unknown as JsMsg };
}

/** The service's counts in Postgres (the counter flushed first: what the old code held in memory counts too). */
async function counts(service: string) {
  await ledger.flush();
  const rows = await stack.database.sql<{ stage: string; reason: string; n: number }[]>`
    select stage, reason, sum(count)::int as n from ledger_counts
    where tenant_id = ${tenantId} and service_name = ${service} group by 1, 2 order by 1, 2`;
  return Object.fromEntries(rows.map((r) => [`${r.stage}/${r.reason}`, r.n]));
}

const rowsOf = async (table: "traces" | "events" | "scores", service: string) => {
  const [{ n }] = await stack.database.sql<{ n: number }[]>`
    select count(*)::int as n from ${stack.database.sql(table)} x join trace_services s on s.id = x.trace_service_id
    where x.tenant_id = ${tenantId} and s.name = ${service}`;
  return n;
};

test("a batch written again after its acknowledgement was lost is counted stored once, every kind", async () => {
  const now = Date.now();
  const batch = [
    ...[1, 2, 3, 4, 5].map((i) => trace("again", `again-t${i}`, at(now + i))),
    event("again", "again-e1", at(now + 10)),
    event("again", "again-e2", at(now + 11)),
    score("again", "again-k1", at(now + 12)),
    score("again", "again-k2", at(now + 13)),
  ];
  expect(await handle(batch.map((m) => delivery(m, 1)))).toEqual(batch.map(() => "ack"));
  // The same messages again, as JetStream redelivers them (a NATS restart lost the ack, or the
  // processor was killed between the commit and the ack): written as no-ops, counted nothing.
  expect(await handle(batch.map((m) => delivery(m, 2)))).toEqual(batch.map(() => "ack"));
  expect(await handle(batch.map((m) => delivery(m, 3)))).toEqual(batch.map(() => "ack"));
  expect(await counts("again")).toEqual({ "stored/event": 2, "stored/score": 2, "stored/trace": 5 });
  expect([await rowsOf("traces", "again"), await rowsOf("events", "again"), await rowsOf("scores", "again")]).toEqual([
    5, 2, 2,
  ]);
  // /metrics sees each count once too.
  expect(observed.get("stored/trace")).toBeGreaterThanOrEqual(5);
});

test("another copy of an item already stored counts stored as a duplicate, outside the row check", async () => {
  const now = Date.now();
  const first = [
    trace("copies", "copy-t1", at(now)),
    event("copies", "copy-e1", at(now)),
    score("copies", "copy-k1", at(now)),
  ];
  await handle(first.map((m) => delivery(m)));
  // The same items received again in later requests (past INGEST's duplicate window: accepted
  // again), and one trace twice in one request. (A duplicate leaves no row to know it by, so one
  // delivered again would count again: docs/ledger.md, "What can be off".)
  const later = now + 5 * 60_000;
  const copies = [
    trace("copies", "copy-t1", at(later)),
    event("copies", "copy-e1", at(later)),
    score("copies", "copy-k1", at(later)),
    trace("copies", "copy-t2", at(later)),
    trace("copies", "copy-t2", at(later)),
  ];
  await handle(copies.map((m) => delivery(m)));
  // The first copies delivered again: written by this very copy, counted nothing.
  await handle(first.map((m) => delivery(m, 2)));
  // Accepted 8 items; 8 are stored, 5 of them already there by their natural key. The row check
  // reads only `stored/trace` (2 traces, 2 rows).
  expect(await counts("copies")).toEqual({
    "stored/duplicate": 4,
    "stored/event": 1,
    "stored/score": 1,
    "stored/trace": 2,
  });
  expect(await rowsOf("traces", "copies")).toBe(2);
});

test("a replayed dead letter counts stored and replayed with its row, once however often it is delivered", async () => {
  const m = trace("replay", "replay-t1", at(Date.now()));
  await handle([delivery(m, 1, 42)]);
  await handle([delivery(m, 2, 42)]);
  expect(await counts("replay")).toEqual({ "replayed/": 1, "stored/trace": 1 });
});

test("a write that fails counts nothing: the count is in its transaction", async () => {
  const m = trace("failing", "failing-t1", at(Date.now()));
  // A trigger that refuses this trace row (a data exception: permanent, set aside alone).
  const sql = stack.database.sql;
  await sql.unsafe(`
    create or replace function refuse_failing() returns trigger language plpgsql as $$
    begin if new.trace_id = 'failing-t1' then raise exception 'refused' using errcode = '22023'; end if; return new; end $$;
    create trigger refuse_failing before insert on traces for each row execute function refuse_failing();`);
  try {
    const ok = trace("failing", "failing-t2", at(Date.now()));
    const outcomes = await handle([delivery(m), delivery(ok)]);
    expect(outcomes[0]).toMatchObject({ fail: expect.anything() });
    expect(outcomes[1]).toBe("ack");
    expect(await counts("failing")).toEqual({ "stored/trace": 1 });
    expect(await rowsOf("traces", "failing")).toBe(1);
  } finally {
    await sql.unsafe("drop trigger refuse_failing on traces; drop function refuse_failing();");
  }
});

test("an item of a message without a door (an ingest that counted nothing) counts accepted, unrecorded, with its row, once however often it is delivered", async () => {
  const now = Date.now();
  const batch = [trace("doorless", "doorless-t1", at(now)), score("doorless", "doorless-k1", at(now + 1))];
  for (const n of [1, 2])
    expect(await handle(batch.map((m) => delivery(m, n, undefined, null)))).toEqual(batch.map(() => "ack"));
  // A replay of such a message (its original headers: no door) was counted accepted when first settled.
  expect(await handle([delivery(trace("doorless", "doorless-t2", at(now + 2)), 1, 9, null)])).toEqual(["ack"]);
  expect(await counts("doorless")).toEqual({
    "accepted/unrecorded": 2,
    "replayed/": 1,
    "stored/score": 1,
    "stored/trace": 2,
  });
});
