import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import type { Processor, ProcessorDeps } from "../apps/processor/src/processor";
import { maturationsInStream } from "./helpers/matured-stream";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";
import { TRACE_METRICS_SQL } from "@cellar/shared/db/trace-metrics";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let processor: Processor | undefined;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
});
afterAll(() => stack.stop());

async function restartProcessor(overrides: Partial<ProcessorDeps> = {}) {
  await processor?.stop();
  processor = await stack.startProcessor(overrides);
}

const send = (path: "/raw/traces" | "/raw/events", body: unknown) =>
  stack.ingestRequest(path, body, { authorization: `Bearer ${tenant.telemetryKey}` }).then(async (r) => {
    expect(r.status).toBe(200);
  });

const maturedMessages = () => maturationsInStream(stack);
const sessionEvents = async (sessionId: string) =>
  (await maturedMessages()).filter((m) => m.type === "session.matured" && m.sessionId === sessionId);

async function sessionRow(sessionId: string) {
  const [row] = await stack.database.sql<
    { id: string; status: string; maturation_count: number; published_count: number; activity_seq: number }[]
  >`
    select id, status, maturation_count, published_count, activity_seq from sessions where session_id = ${sessionId}`;
  return row;
}

test("a session matures with count 1, re-opens on new activity (trace or event) and re-matures with 2, then 3", async () => {
  await restartProcessor();
  await send(
    "/raw/traces",
    chatTrace({ sessionId: "reopen-1", messages: [{ role: "user", content: "hi" }], reply: "hello" }),
  );
  const first = await waitFor(async () => (await sessionEvents("reopen-1")).length === 1 && sessionEvents("reopen-1"), {
    what: "first session.matured",
  });
  expect(first[0]).toMatchObject({ maturationCount: 1, serviceName: "support-bot", tenantId: tenant.tenantId });

  await send(
    "/raw/traces",
    chatTrace({
      sessionId: "reopen-1",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
        { role: "user", content: "again" },
      ],
      reply: "yes?",
    }),
  );
  const second = await waitFor(
    async () => {
      const e = await sessionEvents("reopen-1");
      return e.length === 2 && e;
    },
    { what: "second session.matured" },
  );
  expect(second.map((m) => m.maturationCount)).toEqual([1, 2]);
  expect(second[1].entityPk).toBe(second[0].entityPk);
  expect(Date.parse(second[1].occurredAt)).toBeGreaterThan(Date.parse(second[0].occurredAt));

  // An event alone is activity too.
  await send("/raw/events", {
    name: "feedback",
    service_name: "support-bot",
    session_id: "reopen-1",
    timestamp: new Date().toISOString(),
  });
  const third = await waitFor(
    async () => {
      const e = await sessionEvents("reopen-1");
      return e.length === 3 && e;
    },
    { what: "third session.matured" },
  );
  expect(third.map((m) => m.maturationCount)).toEqual([1, 2, 3]);
  // The publish is recorded after JetStream acknowledged it: the event can be seen first.
  const row = await waitFor(
    async () => {
      const r = await sessionRow("reopen-1");
      return r.published_count === 3 && r;
    },
    { what: "third publish recorded" },
  );
  expect(row).toMatchObject({ status: "matured", maturation_count: 3, published_count: 3 });
  const [analysis] = await stack.database
    .sql`select maturation_count, through_activity_seq from session_analyses where session_pk = ${row.id}`;
  expect(analysis.maturation_count).toBe(3);
  expect(Number(analysis.through_activity_seq)).toBe(Number(row.activity_seq));
});

test("a trace matures once; the same trace sent again is a duplicate, not a second event", async () => {
  const body = chatTrace({
    sessionId: "trace-once",
    messages: [{ role: "user", content: "q" }],
    reply: "a",
    extra: { trace_id: "trace-fixed-1" },
  });
  await send("/raw/traces", body);
  await waitFor(
    async () => (await maturedMessages()).some((m) => m.type === "trace.matured" && m.traceId === "trace-fixed-1"),
    { what: "trace.matured" },
  );
  await waitFor(async () => (await sessionEvents("trace-once")).length === 1, { what: "session matured" });
  // Same trace id, different bytes (so ingest's duplicate window does not drop it first).
  await send("/raw/traces", { ...body, environment: "retry" });
  await new Promise((r) => setTimeout(r, 2_500)); // more than the window: a re-open would have matured by now
  const traces = (await maturedMessages()).filter((m) => m.type === "trace.matured" && m.traceId === "trace-fixed-1");
  expect(traces.map((m) => m.maturationCount)).toEqual([1]);
  expect(await sessionEvents("trace-once")).toHaveLength(1);
  // Matured and published: analysed, and no longer pending (migration 0016: the trace row is never updated).
  // The pending row goes once the publish is acknowledged and recorded: waited for, not slept on.
  const t = await waitFor(
    async () => {
      const [r] = await stack.database.sql`
        select (select count(*) from trace_analyses ta where ta.trace_pk = t.id)::int as analysed,
          (select count(*) from pending_traces p where p.trace_pk = t.id)::int as pending
        from traces t where trace_id = 'trace-fixed-1'`;
      return r?.pending === 0 && r;
    },
    { what: "trace-fixed-1 no longer pending" },
  );
  expect(t).toMatchObject({ analysed: 1, pending: 0 });
  const [a] = await stack.database.sql<
    { metrics: any }[]
  >`select ${stack.database.sql.unsafe(TRACE_METRICS_SQL)} as metrics from trace_analyses ta join traces tr on tr.id = ta.trace_pk where tr.trace_id = 'trace-fixed-1'`;
  expect(a.metrics).toMatchObject({ modelCalls: 1, promptTokens: 120, completionTokens: 40 });
});

test("traces written together mature together, each exactly once", async () => {
  const ids = Array.from({ length: 6 }, (_, i) => `trace-batch-${i}`);
  await Promise.all(
    ids.map((id, i) =>
      send(
        "/raw/traces",
        chatTrace({
          sessionId: `batch-${i % 2}`,
          messages: [{ role: "user", content: id }],
          reply: "ok",
          extra: { trace_id: id },
        }),
      ),
    ),
  );
  const matured = await waitFor(
    async () => {
      const all = (await maturedMessages()).filter((m) => m.type === "trace.matured" && ids.includes(m.traceId!));
      return all.length >= ids.length && all;
    },
    { what: "all traces matured" },
  );
  await new Promise((r) => setTimeout(r, 1_500));
  const again = (await maturedMessages()).filter((m) => m.type === "trace.matured" && ids.includes(m.traceId!));
  expect(again.map((m) => m.traceId).sort()).toEqual([...ids].sort());
  expect(matured.every((m) => m.maturationCount === 1)).toBe(true);
  const rows = await waitFor(
    async () => {
      const r = await stack.database.sql`
        select (select count(*) from trace_analyses ta where ta.trace_pk = t.id)::int as analysed,
          (select count(*) from pending_traces p where p.trace_pk = t.id)::int as pending
        from traces t where trace_id = any(${ids})`;
      return r.length === ids.length && r.every((x) => x.pending === 0) && r;
    },
    { what: "the batch stored and no longer pending" },
  );
  expect(rows.length).toBe(ids.length);
  expect(rows.every((r) => r.analysed === 1 && r.pending === 0)).toBe(true);
});

test("a processor killed between the Postgres commit and the MATURED publish replays into exactly one event", async () => {
  let crashed = 0;
  await restartProcessor({
    afterCommit: (m) => {
      if (m.sessionId === "crash-1" && m.type === "session.matured") {
        crashed++;
        throw new Error("simulated crash after commit");
      }
    },
  });
  await send(
    "/raw/traces",
    chatTrace({ sessionId: "crash-1", messages: [{ role: "user", content: "q" }], reply: "a" }),
  );
  await waitFor(async () => crashed > 0 && (await sessionRow("crash-1"))?.status === "matured", {
    what: "commit without publish",
  });
  const committed = await sessionRow("crash-1");
  expect(committed).toMatchObject({ maturation_count: 1, published_count: 0 });
  expect(await sessionEvents("crash-1")).toHaveLength(0);

  await restartProcessor(); // the new instance gets the unacked marker again
  await waitFor(async () => (await sessionRow("crash-1")).published_count === 1, {
    what: "replayed publish",
    timeoutMs: 20_000,
  });
  const events = await sessionEvents("crash-1");
  expect(events.map((m) => m.maturationCount)).toEqual([1]);
  expect((await sessionRow("crash-1")).maturation_count).toBe(1);
});

test("markers lost while the processor was down: the sweep matures and publishes what is owed, once", async () => {
  await restartProcessor({
    afterCommit: (m) => {
      if (m.sessionId === "owed-1") throw new Error("simulated crash after commit");
    },
  });
  await send("/raw/traces", chatTrace({ sessionId: "owed-1", messages: [{ role: "user", content: "q" }], reply: "a" }));
  await waitFor(async () => (await sessionRow("owed-1"))?.status === "matured", { what: "owed-1 committed" });
  await send("/raw/traces", chatTrace({ sessionId: "lost-1", messages: [{ role: "user", content: "q" }], reply: "a" }));
  await waitFor(async () => sessionRow("lost-1"), { what: "lost-1 written", intervalMs: 20 });
  await processor!.stop();
  processor = undefined;
  // Lose every marker and key (admin purge writes no marker).
  await stack.nats.jsm.streams.purge(`KV_${stack.nats.topology.activityBucket}`);
  // lost-1 may have matured already through its marker before the purge; force the lost case if so.
  const lost = await sessionRow("lost-1");
  if (lost.status === "matured") {
    await stack.database
      .sql`update sessions set status = 'active', maturation_count = 0, published_count = 0, matured_at = null where id = ${lost.id}`;
    const before = await sessionEvents("lost-1");
    expect(before.length).toBeLessThanOrEqual(1);
  }
  const alreadyPublishedLost = (await sessionEvents("lost-1")).length;
  await new Promise((r) => setTimeout(r, 1_200));
  await restartProcessor({ sweepIntervalMs: 200, sweepGraceSeconds: 1 });
  await waitFor(
    async () => (await sessionRow("lost-1")).published_count >= 1 && (await sessionRow("owed-1")).published_count === 1,
    { what: "sweep recovery", timeoutMs: 20_000 },
  );
  expect((await sessionEvents("owed-1")).map((m) => m.maturationCount)).toEqual([1]);
  const lostEvents = await sessionEvents("lost-1");
  // A message published before the forced reset has the same msg id (entity + count 1): deduplicated.
  expect(lostEvents.map((m) => m.maturationCount)).toEqual([1]);
  expect(alreadyPublishedLost).toBeLessThanOrEqual(1);
  expect(await sessionRow("lost-1")).toMatchObject({ status: "matured", maturation_count: 1 });
  await processor!.stop();
  processor = undefined;
});

// A trace's state lives in its pending row (migration 0016, docs/maturation.md "A trace's state").
const sendTrace = (sessionId: string, traceId: string) =>
  send(
    "/raw/traces",
    chatTrace({ sessionId, messages: [{ role: "user", content: traceId }], reply: "a", extra: { trace_id: traceId } }),
  );

const traceEvents = async (traceId: string) =>
  (await maturedMessages()).filter((m) => m.type === "trace.matured" && m.traceId === traceId);

/** The trace's pending row (null once published) and its analysis' time (null before maturation). */
async function traceState(traceId: string) {
  const [row] = await stack.database.sql<{ pending: boolean; owed_since: Date | null; analysed_at: Date | null }[]>`
    select p.trace_pk is not null as pending, p.matured_at as owed_since, ta.computed_at as analysed_at
    from traces t left join pending_traces p on p.ingested_at = t.ingested_at and p.trace_pk = t.id
      left join trace_analyses ta on ta.trace_pk = t.id
    where t.trace_id = ${traceId}`;
  return row;
}

test("a processor killed between a trace's maturation commit and its MATURED publish replays into exactly one event", async () => {
  let crashed = 0;
  await restartProcessor({
    afterCommit: (m) => {
      if (m.type === "trace.matured" && m.traceId === "crash-trace") {
        crashed++;
        throw new Error("simulated crash after commit");
      }
    },
  });
  await sendTrace("crash-session", "crash-trace");
  await waitFor(async () => crashed > 0 && (await traceState("crash-trace"))?.owed_since !== null, {
    what: "commit without publish",
  });
  const owed = await traceState("crash-trace");
  expect(owed.pending).toBe(true);
  expect(owed.analysed_at?.getTime()).toBe(owed.owed_since?.getTime());
  expect(await traceEvents("crash-trace")).toHaveLength(0);

  await restartProcessor(); // the unacked batch marker comes again
  await waitFor(async () => (await traceState("crash-trace")).pending === false, {
    what: "replayed publish",
    timeoutMs: 20_000,
  });
  const events = await traceEvents("crash-trace");
  expect(events.map((m) => [m.maturationCount, m.occurredAt])).toEqual([[1, owed.owed_since!.toISOString()]]);
});

test("markers lost: the sweep matures and publishes the trace once, and prunes a pending row whose trace is gone", async () => {
  await processor?.stop();
  processor = undefined;
  await sendTrace("lost-session", "lost-trace");
  // Written by the ingest consumer of a processor that then stops before the window ends.
  await restartProcessor();
  await waitFor(async () => (await traceState("lost-trace")) ?? false, { what: "lost-trace written", intervalMs: 20 });
  await processor!.stop();
  processor = undefined;
  await stack.nats.jsm.streams.purge(`KV_${stack.nats.topology.activityBucket}`);
  const { sql } = stack.database;
  const [orphan] = await sql<{ id: string }[]>`
    insert into pending_traces (ingested_at, trace_pk, tenant_id) values (now() - interval '1 hour', gen_random_uuid(), ${tenant.tenantId})
    returning trace_pk as id`;
  const publishedBefore = (await traceEvents("lost-trace")).length;
  expect(publishedBefore).toBeLessThanOrEqual(1);

  await new Promise((r) => setTimeout(r, 1_200));
  await restartProcessor({ sweepIntervalMs: 200, sweepGraceSeconds: 1 });
  await waitFor(async () => (await traceState("lost-trace")).pending === false, {
    what: "sweep recovery",
    timeoutMs: 20_000,
  });
  await waitFor(async () => (await sql`select 1 from pending_traces where trace_pk = ${orphan.id}`).length === 0, {
    what: "orphan pruned",
    timeoutMs: 20_000,
  });
  expect((await traceEvents("lost-trace")).map((m) => m.maturationCount)).toEqual([1]);
  expect((await traceState("lost-trace")).analysed_at).not.toBeNull();
});
