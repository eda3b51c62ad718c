import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import type { DeadLetterInfo } from "@cellar/shared/nats/consume";
import { consumerBacklog } from "@cellar/shared/nats/consume/lanes";
import { listDeadLetters } from "@cellar/shared/nats/dead-letters";
import { laneOf, laneToken } from "@cellar/shared/nats/lanes";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * One INGEST message per request (issue 36, docs/analyse-once.md): the batch door's items travel
 * in one message, each item written by its natural key, a bad item set aside alone (and
 * replayable through the API) while the good ones around it are stored.
 */
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const dead: DeadLetterInfo[] = [];

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 60, startProcessor: false });
  await stack.startProcessor({ consume: { onDeadLetter: (d) => void dead.push(d), policy: { backoffMs: [200] } } });
  tenant = await bootstrapTenant(stack.database.db, { name: "batches" });
});
afterAll(() => stack.stop());

const trace = (sessionId: string, text = "hello") =>
  chatTrace({ sessionId, messages: [{ role: "user", content: text }], reply: "hi" }) as Record<string, unknown>;
const event = (sessionId: string, name = "checkout") => ({
  name,
  service_name: "support-bot",
  session_id: sessionId,
  timestamp: new Date().toISOString(),
});
const postBatch = (items: Array<{ type: string; body: unknown }>) =>
  stack.ingestRequest("/raw/batch", { items }, { authorization: `Bearer ${tenant.telemetryKey}` });
const count = async (table: "traces" | "events", sessionPrefix: string) =>
  Number(
    (
      await stack.database.sql.unsafe(
        `select count(*)::int as n from ${table} where tenant_id = $1 and session_id like $2`,
        [tenant.tenantId, `${sessionPrefix}%`],
      )
    )[0].n,
  );
const streamInfo = () => stack.nats.jsm.streams.info(stack.nats.topology.ingestStream);
const drained = () =>
  waitFor(async () => (await consumerBacklog(stack.nats.jsm, ingestStream, stack.nats.topology)) === 0, {
    what: "INGEST consumed",
    timeoutMs: 20_000,
  });

test("a batch request is one INGEST message on its tenant's lane; a copy of its items under another id adds no row", async () => {
  const before = (await streamInfo()).state.last_seq;
  const items = [
    { type: "trace", body: trace("one-a") },
    { type: "event", body: event("one-a") },
    { type: "trace", body: trace("one-b") },
    { type: "event", body: event("one-b", "refund") },
    { type: "trace", body: trace("one-c") },
  ];
  const res = await postBatch(items);
  expect(res.status).toBe(200);
  expect((await res.json()).status).toBe("success");
  const after = (await streamInfo()).state.last_seq;
  expect(after - before).toBe(1);
  const stored = (await stack.nats.jsm.streams.getMessage(stack.nats.topology.ingestStream, { seq: after }))!;
  expect(stored.subject).toBe(`${stack.nats.topology.subjectPrefix}ingest.batch.${laneToken(laneOf(tenant.tenantId))}`);
  const body = stored.json<{ kind: string; tenantId: string; items: Array<{ kind: string; messageId: string }> }>();
  expect(body).toMatchObject({ kind: "batch", tenantId: tenant.tenantId });
  expect(body.items.map((i) => i.kind)).toEqual(["trace", "event", "trace", "event", "trace"]);
  await waitFor(async () => (await count("traces", "one-")) === 3 && (await count("events", "one-")) === 2, {
    what: "the batch's rows",
  });

  // The same request again is stored once by JetStream (the same items make the same message id).
  expect((await postBatch(items)).status).toBe(200);
  expect((await streamInfo()).state.last_seq).toBe(after);
  // The same items under another message id (another request, a replay with a fresh id): written
  // again by their natural keys, they change nothing.
  await stack.nats.js.publish(stored.subject, stored.data, {
    msgID: `${body.items.map((i) => i.messageId).join("")}:again`.slice(-100),
    headers: ingestCheckedHeaders("batch"),
  });
  await drained();
  expect(await count("traces", "one-")).toBe(3);
  expect(await count("events", "one-")).toBe(2);
  expect(dead).toEqual([]);
});

test("an item Postgres refuses is dead-lettered alone, the items around it stored; replayed through the API once fixed", async () => {
  await stack.database
    .sql`alter table events add constraint batch_poison_probe check (name <> 'poison-probe') not valid`;
  try {
    const res = await postBatch([
      { type: "trace", body: trace("iso-a") },
      { type: "event", body: event("iso-b", "poison-probe") },
      { type: "event", body: event("iso-c") },
      { type: "trace", body: trace("iso-d") },
    ]);
    expect(res.status).toBe(200);
    await waitFor(async () => dead.length === 1, { what: "the bad item's dead letter", timeoutMs: 20_000 });
    await waitFor(async () => (await count("traces", "iso-")) === 2 && (await count("events", "iso-")) === 1, {
      what: "the good items' rows",
    });
  } finally {
    await stack.database.sql`alter table events drop constraint batch_poison_probe`;
  }
  // The dead letter is the item alone, in the shape of a single message, on its own subject.
  const [letter] = await listDeadLetters(stack.nats.jsm, stack.nats.topology, { stream: "ingest" });
  expect(letter.subject).toBe(`${stack.nats.topology.subjectPrefix}ingest.event.${laneToken(laneOf(tenant.tenantId))}`);
  expect(letter.error).toContain("23514");
  expect(JSON.parse(letter.body)).toMatchObject({
    kind: "event",
    tenantId: tenant.tenantId,
    serviceName: "support-bot",
    payload: { name: "poison-probe", session_id: "iso-b" },
  });
  expect(letter.headers["Cellar-Checked"]).toBeDefined();

  // Replayed through the platform API, the item lands.
  const replay = await stack.platformRequest(`/dead-letters/${letter.seq}/replay`, {
    method: "POST",
    token: tenant.platformKey,
  });
  expect(replay.status).toBe(200);
  await waitFor(async () => (await count("events", "iso-b")) === 1, { what: "the replayed item's row" });
});

test("an item that fails its kind's rules is set aside alone; the message's other items are stored", async () => {
  const received = new Date().toISOString();
  const item = (kind: string, messageId: string, payload: unknown) => ({
    kind,
    serviceName: "support-bot",
    messageId,
    payload,
  });
  const { session_id: _, ...noSession } = event("rules-b");
  const message = {
    kind: "batch",
    messageId: "rules-1",
    tenantId: tenant.tenantId,
    receivedAt: received,
    items: [
      item("trace", "rules-a", trace("rules-a")),
      item("event", "rules-b", noSession),
      item("span", "rules-c", event("rules-c")),
      item("event", "rules-d", event("rules-d")),
    ],
  };
  const deadBefore = dead.length;
  await stack.nats.js.publish(ingestStream.subjectOf!(stack.nats.topology, message as never), JSON.stringify(message), {
    msgID: "rules-1",
    headers: ingestCheckedHeaders("batch"),
  });
  await waitFor(async () => dead.length === deadBefore + 2, { what: "two dead letters" });
  await waitFor(async () => (await count("traces", "rules-")) === 1 && (await count("events", "rules-")) === 1, {
    what: "the good items' rows",
  });
  const reasons = dead.slice(deadBefore).map((d) => d.reason);
  expect(reasons).toEqual([
    "invalid items[1]: invalid payload.session_id: expected string",
    'invalid items[2]: invalid kind: must be "trace", "event" or "score"',
  ]);
});

test("a message of the shape before batches (one item) is still written", async () => {
  const message = {
    kind: "trace",
    messageId: "old-shape-1",
    tenantId: tenant.tenantId,
    serviceName: "support-bot",
    receivedAt: new Date().toISOString(),
    payload: trace("old-shape"),
  };
  await stack.nats.js.publish(`${stack.nats.topology.subjectPrefix}ingest.trace`, JSON.stringify(message), {
    msgID: "old-shape-1",
  });
  await waitFor(async () => (await count("traces", "old-shape")) === 1, { what: "the old-shape trace" });
});
