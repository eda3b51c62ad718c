import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { maturationsOf, type IngestMessage, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { createTestStack, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

// Found by the chaos run (bench/chaos.ts): two processor instances writing bursts of the same
// existing sessions deadlocked ~130 times a minute. Inserting a trace takes FOR KEY SHARE on its
// session (foreign key) in trace order; the session update then asked for FOR UPDATE, which
// conflicts with another writer's KEY SHARE taken in a different order.
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
});
afterAll(() => stack.stop());

const message = (sessionId: string, kind: "trace" | "event" = "trace"): IngestMessage => {
  const id = crypto.randomUUID();
  const payload =
    kind === "trace"
      ? chatTrace({ sessionId, messages: [{ role: "user", content: "q" }], reply: "a", extra: { trace_id: `t-${id}` } })
      : { name: "step", session_id: sessionId, timestamp: new Date().toISOString() };
  return {
    kind,
    tenantId: tenant.tenantId,
    serviceName: "support-bot",
    messageId: id.replace(/-/g, "").padEnd(64, "0"),
    receivedAt: new Date().toISOString(),
    payload,
  } as unknown as IngestMessage;
};

test("two writers with batches over the same existing sessions never deadlock", async () => {
  const sessions = Array.from({ length: 30 }, (_, i) => `busy-${i}`);
  await writeIngestBatch(
    stack.database.sql,
    sessions.map((s) => message(s)),
  );
  const failures: string[] = [];
  for (let round = 0; round < 15; round++) {
    // Each batch holds traces of every session, in random trace-id order (as bursts split over
    // two processor instances arrive), plus events.
    const batch = () => sessions.flatMap((s) => [message(s), message(s, "event")]).sort(() => Math.random() - 0.5);
    const results = await Promise.allSettled([
      writeIngestBatch(stack.database.sql, batch()),
      writeIngestBatch(stack.database.sql, batch()),
      writeIngestBatch(stack.database.sql, batch()),
    ]);
    for (const r of results) if (r.status === "rejected") failures.push(String(r.reason));
  }
  expect(failures).toEqual([]);
  const [{ n }] = await stack.database.sql<
    { n: number }[]
  >`select count(*)::int as n from traces where session_id like 'busy-%'`;
  expect(n).toBe(30 + 15 * 3 * 30);
}, 60_000);

test("maturation racing two writers over the same sessions never deadlocks", async () => {
  const { matureSessions } = await import("../apps/processor/src/maturation/mature");
  const { createLogger } = await import("@cellar/shared/logger");
  const sessions = Array.from({ length: 30 }, (_, i) => `racing-${i}`);
  await writeIngestBatch(
    stack.database.sql,
    sessions.map((s) => message(s)),
  );
  const pks = (
    await stack.database.sql<{ id: string }[]>`select id from sessions where session_id like 'racing-%'`
  ).map((r) => r.id);
  // Window 0: every session is due, so maturation locks all of them while the writers insert.
  const deps = {
    sql: stack.database.sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger: createLogger("silent"),
    windowSeconds: 0,
  };
  const failures: string[] = [];
  for (let round = 0; round < 15; round++) {
    const batch = () => sessions.flatMap((s) => [message(s), message(s, "event")]).sort(() => Math.random() - 0.5);
    const results = await Promise.allSettled([
      writeIngestBatch(stack.database.sql, batch()),
      matureSessions(
        deps,
        [...pks].sort(() => Math.random() - 0.5),
      ),
      writeIngestBatch(stack.database.sql, batch()),
    ]);
    for (const r of results) if (r.status === "rejected") failures.push(String(r.reason));
  }
  expect(failures).toEqual([]);
}, 60_000);

test("a maturation whose MATURED publish was lost is still published when the session is reopened and matures again", async () => {
  const { matureSessions } = await import("../apps/processor/src/maturation/mature");
  const { createLogger } = await import("@cellar/shared/logger");
  const { jetstream } = await import("@nats-io/jetstream");
  void jetstream;
  const sid = "owed-publish";
  await writeIngestBatch(stack.database.sql, [message(sid)]);
  const [{ id: pk }] = await stack.database.sql<{ id: string }[]>`select id from sessions where session_id = ${sid}`;
  const base = {
    sql: stack.database.sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger: createLogger("silent"),
    windowSeconds: 0,
  };
  // Found by the chaos run: Postgres went away between the maturation's commit and the
  // published_count update, the marker was naked, new activity reopened the session, and the
  // next maturation overwrote the owed one: session.matured #1 never reached any receiver.
  await expect(
    matureSessions(
      {
        ...base,
        afterCommit: () => {
          throw new Error("crash after commit");
        },
      },
      [pk],
    ),
  ).rejects.toThrow("crash after commit");
  await writeIngestBatch(stack.database.sql, [message(sid)]); // reopened, #1 still owed
  await matureSessions(base, [pk]);
  const counts: number[] = [];
  const consumer = await stack.nats.js.consumers.get(stack.nats.topology.maturedStream);
  const batch = await consumer.fetch({ max_messages: 1000, expires: 2_000 });
  for await (const m of batch) {
    for (const body of maturationsOf(m.json<MaturedStreamMessage>()))
      if (body.entityPk === pk) counts.push(body.maturationCount);
  }
  expect(counts.sort()).toEqual([1, 2]);
  const [row] = await stack.database.sql<
    { maturation_count: number; published_count: number }[]
  >`select maturation_count, published_count from sessions where id = ${pk}`;
  expect(row).toEqual({ maturation_count: 2, published_count: 2 });
}, 30_000);
