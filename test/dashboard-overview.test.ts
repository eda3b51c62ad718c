// The overview read and the rollups behind it: kept by the processor's own MATURED consumer as
// sessions mature, idempotent on redelivery, corrected on re-maturation, empty without data.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { addTo, emptyHistogram } from "@cellar/shared/rollups/histogram";
import {
  applySessionRollup,
  backfillRollups,
  expandParts,
  type StoredParts,
} from "../apps/processor/src/rollups/rollups";
import { chatTrace } from "./helpers/payloads";
import { assertDocumented, seedPlatform, unsettledSessions, type PlatformFixture } from "./helpers/platform";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

let stack: TestStack;
let f: PlatformFixture;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
}, 90_000);
afterAll(() => stack?.stop());

const overview = async (service: string, query = "", token = f.keys.owner) => {
  const res = await stack.platformRequest(`/overview/${service}${query}`, { token });
  return { status: res.status, body: (await res.json()) as any };
};
/** The overview without its clock (`from`, `to`), to compare two reads. */
const figures = async (service: string) => {
  const { from: _f, to: _t, ...rest } = (await overview(service)).body;
  return rest;
};
const sessionCount = async () => {
  const [r] = await stack.database.sql<{ n: number }[]>`
    select count(*)::int as n from session_analyses sa join trace_services ts on ts.id = sa.trace_service_id
    where ts.name = 'support-bot' and ts.tenant_id = ${f.a.tenantId}`;
  return r.n;
};

test("the overview answers from the rollups the processor keeps as sessions mature", async () => {
  const matured = await sessionCount();
  const o = await waitFor(
    async () => {
      const r = await overview("support-bot", "?window=24h");
      return r.body.totals?.sessions === matured ? r : null;
    },
    { what: "every matured session rolled up", timeoutMs: 30_000 },
  );
  expect(o.status).toBe(200);
  assertDocumented(stack, "GET", "/overview/support-bot", o.body);
  expect(o.body.totals.traces).toBe(3); // conv-1 (2 model calls) and conv-2 (1)
  expect(o.body.totals.problemSessions).toBeGreaterThanOrEqual(0);
  expect(o.body.totals.promptTokens).toBe(120 + 120 + 5000);
  const mini = o.body.byModel.find((m: any) => m.model.startsWith("gpt-4o-mini"));
  expect(mini.traces).toBe(3);
  // Every call here is priced: no unpriced call counted, in total or for the model.
  expect(o.body.totals.unpricedCalls).toBe(0);
  expect(mini.unpricedCalls).toBe(0);
  // chatTrace calls last 800 ms: the histogram reads it back within 9%.
  expect(Math.abs(mini.latencyP50Ms - 800) / 800).toBeLessThan(0.1);
  expect(o.body.series.reduce((a: number, s: any) => a + s.sessions, 0)).toBe(matured);
  expect(o.body.environments).toEqual(["test"]);
  expect(o.body.topIssues[0].title).toBe("Customer reports double charge");
  // Every window answers the same totals for data of the last hour.
  for (const w of ["1h", "7d", "30d"])
    expect((await overview("support-bot", `?window=${w}`)).body.totals.sessions).toBe(matured);
  expect((await overview("support-bot", "?window=24h&environment=prod")).body.totals.sessions).toBe(0);
});

/**
 * Every session of every tenant settled (unsettledSessions) and its current maturation rolled up
 * by the processor's consumer. The first test waits on support-bot's count only: the other
 * services' sessions can still be on their way, and the backfill would rightly find them (the CI
 * failure of stop 33). The maturation count is enough here: applySessionRollup below checks the rest.
 */
const everythingRolledUp = () =>
  waitFor(
    async () => {
      if ((await unsettledSessions(stack)) > 0) return false;
      const [r] = await stack.database.sql<{ n: number }[]>`
        select count(*)::int as n from sessions s
        where not exists (select 1 from overview_session_parts p
          where p.session_pk = s.id and p.maturation_count = s.maturation_count)`;
      return r.n === 0;
    },
    { what: "every session's current maturation rolled up", timeoutMs: 30_000 },
  );

test("a redelivered maturation changes nothing; the backfill finds nothing left to do", async () => {
  await everythingRolledUp();
  const before = await figures("support-bot");
  const [conv1] = await stack.database.sql<{ id: string }[]>`select id from sessions where session_id = 'conv-1'`;
  expect(await applySessionRollup(stack.database.sql, conv1.id)).toBe("already applied");
  expect(await backfillRollups(stack.database.sql)).toBe(0);
  expect(await figures("support-bot")).toEqual(before);
});

test("a re-matured session replaces its contribution instead of adding a second one", async () => {
  const before = (await overview("support-bot")).body;
  const r = await stack.ingestRequest(
    "/raw/traces",
    chatTrace({ sessionId: "conv-2", messages: [{ role: "user", content: "again" }], reply: "sure" }),
    { authorization: `Bearer ${f.a.telemetryKey}` },
  );
  expect(r.status).toBe(200);
  const after = await waitFor(
    async () => {
      const o = (await overview("support-bot")).body;
      return o.totals.traces === before.totals.traces + 1 ? o : null;
    },
    { what: "the re-maturation rolled up", timeoutMs: 30_000 },
  );
  expect(after.totals.sessions).toBe(before.totals.sessions);
});

test("the backfill rebuilds the same rollups from the analyses", async () => {
  const before = await figures("support-bot");
  await stack.database.sql`delete from overview_rollups`;
  await stack.database.sql`delete from overview_session_parts`;
  expect((await overview("support-bot")).body.totals.sessions).toBe(0);
  expect(await backfillRollups(stack.database.sql, { batch: 2 })).toBeGreaterThanOrEqual(before.totals.sessions);
  expect(await figures("support-bot")).toEqual(before);
});

test("the batched backfill replaces a stale contribution as the consumer would", async () => {
  const before = await figures("support-bot");
  // Every session's applied parts marked as from an older maturation, and one session's parts
  // doubled: the backfill must subtract what was applied (the doubled parts) and add the current ones.
  // A support-bot session that still exists (a deleted one keeps its parts, and the rows of
  // another service would leave support-bot's figures untouched).
  const [one] = await stack.database.sql<{ session_pk: string; trace_service_id: string }[]>`
    select p.session_pk, p.trace_service_id from overview_session_parts p
    join session_analyses sa using (session_pk) join trace_services ts on ts.id = p.trace_service_id
    where ts.name = 'support-bot' and ts.tenant_id = ${f.a.tenantId} limit 1`;
  const [{ stored }] = await stack.database.sql<{ stored: StoredParts }[]>`
    select parts as stored from overview_session_parts where session_pk = ${one.session_pk}`;
  const parts = expandParts(stored);
  // Written back in the expanded form rows had before the stored form (rollups.ts): still read.
  const doubled = parts.map((p) => ({ ...p, sessions: p.sessions * 2, traces: p.traces * 2 }));
  await stack.database.sql`update overview_session_parts set maturation_count = maturation_count - 1`;
  await stack.database
    .sql`update overview_session_parts set parts = ${stack.database.sql.json(doubled)} where session_pk = ${one.session_pk}`;
  await stack.database.sql`
    update overview_rollups r set sessions = r.sessions + x.sessions, traces = r.traces + x.traces
    from jsonb_to_recordset(${stack.database.sql.json(parts as any)}::jsonb) as x(bucket_seconds int, bucket_start timestamptz, environment text, model text, sessions int, traces int)
    where r.trace_service_id = ${one.trace_service_id} and r.bucket_seconds = x.bucket_seconds
      and r.bucket_start = x.bucket_start and r.environment = x.environment and r.model = x.model`;
  expect((await figures("support-bot")).totals.sessions).toBe(before.totals.sessions + 1);
  expect(await backfillRollups(stack.database.sql, { batch: 3, concurrency: 2 })).toBeGreaterThanOrEqual(
    before.totals.sessions,
  );
  expect(await figures("support-bot")).toEqual(before);
});

test("a service without data answers zeros; roles and bad input as the API does", async () => {
  await stack.database.sql`insert into trace_services (tenant_id, project_id, name)
    select tenant_id, id, 'quiet-bot' from projects where tenant_id = ${f.a.tenantId} and is_default`;
  const empty = await overview("quiet-bot", "?window=7d");
  expect(empty.status).toBe(200);
  expect(empty.body.totals).toMatchObject({ sessions: 0, traces: 0, costUsd: 0, latencyP50Ms: null });
  expect(empty.body.series).toEqual([]);
  expect((await overview("support-bot", "", f.keys.outsider)).status).toBe(403);
  expect((await overview("nope")).status).toBe(404);
  expect((await overview("support-bot", "?window=2w")).body).toEqual({
    error: "invalid window: must be one of 1h, 24h, 7d, 30d",
  });
  expect((await overview("other-bot", "", f.b.platformKey)).status).toBe(200);
  expect((await overview("support-bot", "", f.b.platformKey)).status).toBe(404);
});

test("one answer is one snapshot: a rollup committed while the overview reads shows in all of it or none", async () => {
  const { sql } = stack.database;
  const [svc] = await sql<{ id: string; tenant_id: string }[]>`insert into trace_services (tenant_id, project_id, name)
    select tenant_id, id, 'toggle-bot' from projects where tenant_id = ${f.a.tenantId} and is_default
    returning id, tenant_id`;
  const hist = emptyHistogram();
  addTo(hist, 800);
  const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
  // A session's contribution (its session row and its model row) added and removed, one
  // transaction each, as fast as Postgres takes them, while the overview is read.
  let writing = true;
  let toggles = 0;
  const writer = (async () => {
    while (writing) {
      await sql.begin(async (tx) => {
        if (toggles++ % 2 === 0)
          await tx`insert into overview_rollups (tenant_id, trace_service_id, environment, bucket_seconds, bucket_start, model, sessions, traces, latency_hist)
            select ${svc.tenant_id}, ${svc.id}, 'test', 3600, ${hour}, m, case when m = '' then 1 else 0 end, 1, ${hist}::int[]
            from unnest(array['', 'toggle-model']) m`;
        else await tx`delete from overview_rollups where trace_service_id = ${svc.id}`;
      });
    }
  })();
  const seen = new Set<number>();
  try {
    for (let i = 0; i < 150; i++) {
      const o = await overview("toggle-bot", "?window=24h");
      expect(o.status).toBe(200);
      const { sessions, traces, latencyP50Ms } = o.body.totals;
      seen.add(sessions);
      const model = o.body.byModel.map((m: any) => [m.model, m.traces, m.latencyP50Ms !== null]);
      if (sessions === 0) expect({ traces, latencyP50Ms, model }).toEqual({ traces: 0, latencyP50Ms: null, model: [] });
      else
        expect({ sessions, traces, p50: latencyP50Ms !== null, model }).toEqual({
          sessions: 1,
          traces: 1,
          p50: true,
          model: [["toggle-model", 1, true]],
        });
    }
  } finally {
    writing = false;
    await writer;
    await sql`delete from overview_rollups where trace_service_id = ${svc.id}`;
  }
  // The reads did meet the contribution both present and absent.
  expect([...seen].sort()).toEqual([0, 1]);
});

test("a session calling a model the price book cannot price counts its unpriced calls; a priced call does not", async () => {
  const post = (model: string, start: Date) =>
    stack.ingestRequest(
      "/raw/traces",
      chatTrace({
        sessionId: "conv-unpriced",
        serviceName: "unpriced-bot",
        model,
        start,
        messages: [{ role: "user", content: "hi" }],
        reply: "hello",
      }),
      { authorization: `Bearer ${f.a.telemetryKey}` },
    );
  const t0 = Date.now() - 60_000;
  expect((await post("acme-unknown-llm-9", new Date(t0))).status).toBe(200);
  expect((await post("acme-unknown-llm-9", new Date(t0 + 2000))).status).toBe(200);
  expect((await post("gpt-4o-mini", new Date(t0 + 4000))).status).toBe(200);
  const o = await waitFor(
    async () => {
      const r = await overview("unpriced-bot", "?window=24h");
      return r.status === 200 && r.body.totals?.traces === 3 ? r.body : null;
    },
    { what: "the unpriced session rolled up", timeoutMs: 30_000 },
  );
  assertDocumented(stack, "GET", "/overview/unpriced-bot", o);
  expect(o.totals.unpricedCalls).toBe(2);
  // One row for the unknown model: its calls (traces keep the request's model) and its unpriced
  // count (the cost row keeps the response's dated model) together.
  const unknown = o.byModel.find((m: any) => m.model.startsWith("acme-unknown-llm-9"));
  expect(o.byModel.filter((m: any) => m.model.startsWith("acme-unknown-llm-9")).length).toBe(1);
  const mini = o.byModel.find((m: any) => m.model.startsWith("gpt-4o-mini"));
  expect(unknown).toMatchObject({ traces: 2, unpricedCalls: 2 });
  expect(mini).toMatchObject({ traces: 1, unpricedCalls: 0 });
  expect(mini.costUsd).toBeGreaterThan(0);
  // Redelivery changes nothing and the backfill rebuilds the same count.
  await everythingRolledUp();
  const before = await figures("unpriced-bot");
  const [s] = await stack.database.sql<{ id: string }[]>`select id from sessions where session_id = 'conv-unpriced'`;
  expect(await applySessionRollup(stack.database.sql, s.id)).toBe("already applied");
  await stack.database.sql`delete from overview_rollups`;
  await stack.database.sql`delete from overview_session_parts`;
  expect((await overview("unpriced-bot")).body.totals.unpricedCalls).toBe(0);
  await backfillRollups(stack.database.sql);
  expect(await figures("unpriced-bot")).toEqual(before);
});
