import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, updateTenant } from "@cellar/shared/admin/tenancy";
import { parseRetentionDays, runRetention } from "../apps/processor/src/retention/retention";
import { itemRows } from "./helpers/transcript-shapes";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";
import { unsettledSessions } from "./helpers/settled";

let stack: TestStack;
let free: Awaited<ReturnType<typeof bootstrapTenant>>;
let pro: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  free = await bootstrapTenant(stack.database.db, { name: "free-co", plan: "free" });
  pro = await bootstrapTenant(stack.database.db, { name: "pro-co", plan: "pro" });
});
afterAll(() => stack.stop());

async function ingest(key: string, sessionId: string, n = 1) {
  for (let i = 0; i < n; i++) {
    const r = await stack.ingestRequest(
      "/raw/traces",
      chatTrace({
        sessionId,
        messages: [{ role: "user", content: `q${i}` }],
        reply: "a",
        extra: { trace_id: `${sessionId}-${i}` },
      }),
      { authorization: `Bearer ${key}` },
    );
    expect(r.status).toBe(200);
  }
}
const matured = (ids: string[]) =>
  waitFor(
    async () => {
      const [r] = await stack.database.sql<
        { n: number }[]
      >`select count(*)::int as n from session_analyses where session_id = any(${ids})`;
      // Settled on every trace sent: a session can mature on its first trace while a loaded
      // processor has not stored the second yet.
      return r.n === ids.length && (await unsettledSessions(stack)) === 0;
    },
    { what: `${ids.join(",")} matured`, timeoutMs: 30_000 },
  );

/** Makes a whole session look stored `days` ago. */
async function age(sessionId: string, days: number) {
  const sql = stack.database.sql;
  const at = sql`now() - ${days} * interval '1 day'`;
  await sql`update sessions set last_ingested_at = ${at}, created_at = ${at} where session_id = ${sessionId}`;
  await sql`update traces set ingested_at = ${at} where session_id = ${sessionId}`;
  await sql`update events set ingested_at = ${at} where session_id = ${sessionId}`;
}
const count = async (table: string, sessionId: string) =>
  (
    await stack.database.sql<
      { n: number }[]
    >`select count(*)::int as n from ${stack.database.sql(table)} where session_id = ${sessionId}`
  )[0].n;

test("RETENTION_DAYS: one number for all plans, or per plan", () => {
  expect(parseRetentionDays("7")).toEqual({ free: 7, pro: 7 });
  expect(parseRetentionDays("pro=365")).toEqual({ free: 30, pro: 365 });
  expect(parseRetentionDays("free=14,pro=120")).toEqual({ free: 14, pro: 120 });
  expect(() => parseRetentionDays("gold=3")).toThrow("free=N or pro=N");
  expect(() => parseRetentionDays("free=0")).toThrow("at least 1 day");
});

test("sessions older than their tenant's retention go whole with everything derived; newer ones and other plans stay", async () => {
  await ingest(free.telemetryKey, "free-old", 2);
  await ingest(free.telemetryKey, "free-new");
  await ingest(pro.telemetryKey, "pro-40d");
  await matured(["free-old", "free-new", "pro-40d"]);
  await age("free-old", 31);
  await age("pro-40d", 40);
  const [{ id: oldPk }] = await stack.database.sql<
    { id: string }[]
  >`select id from sessions where session_id = 'free-old'`;
  const r = await runRetention(stack.database.sql, { defaults: parseRetentionDays("free=30,pro=90"), batchSize: 1 });
  expect(r.sessions).toBe(1);
  for (const table of ["sessions", "traces", "spans", "session_analyses", "events"])
    expect(await count(table, "free-old")).toBe(0);
  expect(await itemRows(stack.database.sql, [oldPk])).toEqual([]);
  const [{ n: traceAnalyses }] = await stack.database.sql<
    { n: number }[]
  >`select count(*)::int as n from trace_analyses where trace_id like 'free-old-%'`;
  expect(traceAnalyses).toBe(0);
  expect(await count("traces", "free-new")).toBe(1);
  expect(await count("traces", "pro-40d")).toBe(1); // pro keeps 90 days

  // The per-tenant override (admin CLI `tenant update --retention-days 30`) applies next run.
  expect(await updateTenant(stack.database.db, { id: pro.tenantId, retentionDays: 30 })).toMatchObject({
    retentionDays: 30,
  });
  await runRetention(stack.database.sql, { defaults: parseRetentionDays("free=30,pro=90") });
  expect(await count("sessions", "pro-40d")).toBe(0);
  await updateTenant(stack.database.db, { id: pro.tenantId, retentionDays: null });
});

test("a session still written to keeps its recent traces; its old ones go", async () => {
  await ingest(free.telemetryKey, "long-lived", 2);
  await matured(["long-lived"]);
  const sql = stack.database.sql;
  // Its traces matured too (published, no pending row): a trace's maturation still in flight
  // holds its row, and retention skips a held row until its next run.
  await waitFor(
    async () =>
      (await sql`select 1 from pending_traces p join traces t on t.id = p.trace_pk where t.session_id = 'long-lived'`)
        .length === 0,
    { what: "long-lived traces matured", timeoutMs: 30_000 },
  );
  // Began 40 days ago (its first trace too), written again today.
  await sql`update sessions set created_at = now() - interval '40 days' where session_id = 'long-lived'`;
  await sql`update traces set ingested_at = now() - interval '40 days' where trace_id = 'long-lived-0'`;
  const r = await runRetention(sql, { defaults: parseRetentionDays("30") });
  expect(r.traces).toBe(1);
  const left = await sql<{ trace_id: string }[]>`select trace_id from traces where session_id = 'long-lived'`;
  expect(left.map((t) => t.trace_id)).toEqual(["long-lived-1"]);
  expect(await count("sessions", "long-lived")).toBe(1);
  // Where the derived spans' ids live (migrations 0017, 0022): with their trace, and gone with it.
  const spanIds = (traceId: string) =>
    sql<
      { n: number }[]
    >`select ((select count(*) from span_ids k join traces t on t.id = k.trace_pk where t.trace_id = ${traceId})
      + (select coalesce(sum(cardinality(span_keys)), 0) from traces where trace_id = ${traceId}))::int as n`;
  expect((await spanIds("long-lived-1"))[0].n).toBeGreaterThan(0);
  const [{ n }] = await sql<
    { n: number }[]
  >`select count(*)::int as n from span_ids k where not exists (select 1 from traces t where t.id = k.trace_pk)`;
  expect(n).toBe(0);
});

test("retention never waits on a session another transaction holds; it takes it on the next run", async () => {
  await ingest(free.telemetryKey, "held");
  await ingest(free.telemetryKey, "not-held");
  await matured(["held", "not-held"]);
  await age("held", 60);
  await age("not-held", 60);
  const sql = stack.database.sql;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = sql.begin(async (tx) => {
    await tx`select id from sessions where session_id = 'held' for update`;
    locked();
    await released;
  });
  await isLocked;
  const t0 = performance.now();
  const r = await runRetention(sql, { defaults: parseRetentionDays("30") });
  expect(performance.now() - t0).toBeLessThan(5000);
  expect(r.sessions).toBe(1);
  expect(await count("sessions", "not-held")).toBe(0);
  expect(await count("sessions", "held")).toBe(1);
  release();
  await holder;
  expect((await runRetention(sql, { defaults: parseRetentionDays("30") })).sessions).toBe(1);
  expect(await count("sessions", "held")).toBe(0);
});

test("issues last seen before the cutoff go; recent ones keep their counts", async () => {
  const sql = stack.database.sql;
  const [svc] = await sql<{ id: string }[]>`select id from trace_services where tenant_id = ${free.tenantId} limit 1`;
  await sql`insert into issues (tenant_id, trace_service_id, fingerprint, detector, title, severity, first_seen_at, last_seen_at, occurrences, affected_sessions)
    values (${free.tenantId}, ${svc.id}, 'old', 'd', 'Old', 'low', now() - interval '90 days', now() - interval '45 days', 3, 3),
           (${free.tenantId}, ${svc.id}, 'recent', 'd', 'Recent', 'low', now() - interval '90 days', now() - interval '1 day', 7, 7)`;
  const r = await runRetention(sql, { defaults: parseRetentionDays("30") });
  expect(r.issues).toBe(1);
  const left = await sql<
    { fingerprint: string; occurrences: number }[]
  >`select fingerprint, occurrences from issues where trace_service_id = ${svc.id} and fingerprint in ('old', 'recent')`;
  expect([...left]).toEqual([{ fingerprint: "recent", occurrences: 7 }]);
});

test("scores stored before the cutoff go, and monitor history too, but never an unpublished notification", async () => {
  const sql = stack.database.sql;
  const [svc] = await sql<{ id: string }[]>`select id from trace_services where tenant_id = ${free.tenantId} limit 1`;
  const score = (key: string, daysAgo: number) => sql`
    insert into scores (tenant_id, trace_service_id, target, session_id, name, data_type, value, source, idempotency_key, created_at)
    values (${free.tenantId}, ${svc.id}, 'session', 'retention-scored', 'helpful', 'numeric', 1, 'api', ${key}, now() - ${daysAgo} * interval '1 day')`;
  await score("old-score", 45);
  await score("new-score", 1);
  const [m] = await sql<{ id: string }[]>`
    insert into monitors (tenant_id, trace_service_id, name, entity, metric, window_seconds, threshold, direction)
    values (${free.tenantId}, ${svc.id}, 'retention-monitor', 'session', 'cost', 3600, 1, 'above') returning id`;
  const history = (seq: number, daysAgo: number, eventType: string | null, published: boolean) => sql`
    insert into monitor_events (monitor_id, seq, tenant_id, transition, from_state, to_state, event_type, value, samples, occurred_at, published_at)
    values (${m.id}, ${seq}, ${free.tenantId}, 'alert', 'ok', 'alert', ${eventType}, 2, 10,
            now() - ${daysAgo} * interval '1 day', ${published ? sql`now()` : null})`;
  await history(1, 45, null, false); // old history without a notification: goes
  await history(2, 45, "monitor.triggered", true); // old, notification sent: goes
  await history(3, 45, "monitor.resolved", false); // old, notification not yet sent: stays
  await history(4, 1, null, false); // recent: stays
  const r = await runRetention(sql, { defaults: parseRetentionDays("30") });
  expect(r.scores).toBe(1);
  expect(r.monitorEvents).toBe(2);
  const keys = await sql<
    { idempotency_key: string }[]
  >`select idempotency_key from scores where trace_service_id = ${svc.id}`;
  expect(keys.map((k) => k.idempotency_key)).toEqual(["new-score"]);
  const seqs = await sql<{ seq: number }[]>`select seq from monitor_events where monitor_id = ${m.id} order by seq`;
  expect(seqs.map((s) => s.seq)).toEqual([3, 4]);
});
