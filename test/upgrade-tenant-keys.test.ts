import { insertLegacySpanRows, legacyTraces, storeSpanIdRows } from "../bench/lib/legacy-spans";
import { storeMetricsInFull } from "./helpers/storage-shape";
import { openTraces } from "@cellar/shared/maturation/state";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { setDetectors } from "@cellar/shared/admin/detectors";
import { setPrice } from "@cellar/shared/admin/prices";
import { createInvitation } from "@cellar/shared/admin/signin";
import { updateTenant } from "@cellar/shared/admin/tenancy";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import type { MaturedMessage } from "@cellar/shared/payloads";
import * as deliveries from "@cellar/shared/webhooks/delivery-state";
import { SignInService } from "../apps/platform/src/signin/service";
import { createMonitorCache, evaluateMaturations } from "../apps/processor/src/monitors/evaluate";
import { reconcileOnce } from "../apps/processor/src/ledger/reconcile";
import { countDeadLetters, deadLetterCount } from "../apps/processor/src/ledger/dead-letters";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { DL } from "@cellar/shared/nats/dead-letters";
import { claimJudgement, recordEvaluation } from "@cellar/shared/evaluations/store";
import { createLedgerCounter } from "@cellar/shared/ledger/counter";
import { createLogger } from "@cellar/shared/logger";
import { stubDns } from "./helpers/dns";
import { call, readEndpoints, seedPlatform, type PlatformFixture, callPaced } from "./helpers/platform";
import { runsToItemRows } from "./helpers/transcript-shapes";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * Upgrade without loss (issue 28, migration 0019: every key includes tenant_id). A database is
 * filled through the code paths (ingest, processor, platform API, admin functions) until every
 * table holds rows; its rows are copied into a database migrated only up to the schema before
 * 0019 (the columns 0019 adds are left behind); that one is migrated. Then every row, every key,
 * foreign key and index, and every platform read answer are the same as on the database the code
 * wrote: the migration refills what it adds and rebuilds the keys a fresh install has.
 */
let stack: TestStack;
let f: PlatformFixture;
let adminUrl: string;
let admin: postgres.Sql;
const scratch = mkdtempSync(join(tmpdir(), "cellar-mig19-"));

beforeAll(async () => {
  stack = await createTestStack({
    windowSeconds: 1,
    webhooks: { resolveDns: stubDns({ "hooks.example.com": ["93.184.216.34"] }, null) },
  });
  f = await seedPlatform(stack);
  adminUrl = process.env.DATABASE_URL!;
  admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
}, 120_000);
afterAll(async () => {
  await stack.stop();
  await admin.end({ timeout: 5 });
  rmSync(scratch, { recursive: true, force: true });
});

/** The rest of the tables, through the code that writes them. */
async function fillEveryTable() {
  const { db, sql } = stack.database;
  const owner = { authorization: `Token ${f.keys.owner}` };
  const post = async (path: string, body: unknown, method = "POST") => {
    const r = await call(stack, { method, path, body }, owner);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const [{ tenant_id: tenantId, id: serviceId }] = await sql<{ tenant_id: string; id: string }[]>`
    select tenant_id, id from trace_services where name = 'support-bot'`;
  await setDetectors(db, { tenantId, service: "support-bot", settings: ["latency_outlier.minSamples=50"] });
  await setPrice(db, { tenantId, model: "house-model", input: "1", output: "2" });
  await post("/scores", {
    service_name: "support-bot",
    session_id: "conv-1",
    name: "quality",
    value: 4,
    source: "reviewer",
  });
  await post("/scores/configs/support-bot/quality", { data_type: "numeric" }, "PUT");

  await updateTenant(db, { id: tenantId, webhooks: true });
  const sub = await post("/webhooks", {
    trace_service_id: serviceId,
    name: "ops",
    url: "https://hooks.example.com/cellar",
    event_types: ["session.matured"],
  });
  const at = new Date("2026-11-25T10:00:00Z");
  const row = (id: string, key: string) => ({
    id,
    tenant_id: tenantId,
    subscription_id: sub.id,
    event_type: "session.matured",
    event_key: key,
    body: `{"k":"${key}"}`,
    enqueued_at: at,
  });
  await deliveries.insert(sql, [row("msg_up_1", "session:a:1"), row("msg_up_2", "session:b:1")]);
  // msg_up_1 is delivered at its second attempt: a first attempt that succeeds is kept in the
  // delivery row's own columns (0035), which the schema before 0019 this test copies into lacks
  // (test/webhook-history.test.ts covers that shape).
  const failedOnce = { subscriptionId: sub.id, attempt: 1, statusCode: 500, durationMs: 30, error: "HTTP 500" };
  await deliveries.recordFailure(sql, {
    ...failedOnce,
    deliveryId: "msg_up_1",
    attemptedAt: new Date(at.getTime() - 60_000),
    status: "pending",
    nextAttemptAt: at,
  });
  await deliveries.recordSuccesses(sql, [
    { deliveryId: "msg_up_1", subscriptionId: sub.id, attempt: 2, statusCode: 200, durationMs: 12, attemptedAt: at },
  ]);
  await deliveries.recordFailure(sql, {
    ...failedOnce,
    deliveryId: "msg_up_2",
    attemptedAt: at,
    status: "pending",
    nextAttemptAt: new Date(at.getTime() + 60_000),
  });

  // A monitor any session trips, evaluated over the seeded sessions: samples, a point, an event.
  await post("/monitors", {
    service_name: "support-bot",
    name: "any",
    metric: "tokens",
    window_seconds: 600,
    threshold: 0,
  });
  const matured = await sql<{ id: string; session_id: string; maturation_count: number }[]>`
    select id, session_id, maturation_count from sessions where trace_service_id = ${serviceId} and maturation_count > 0`;
  const batch: MaturedMessage[] = matured.map((s) => ({
    type: "session.matured",
    tenantId,
    traceServiceId: serviceId,
    serviceName: "support-bot",
    entityPk: s.id,
    sessionId: s.session_id,
    maturationCount: s.maturation_count,
    occurredAt: new Date().toISOString(),
  }));
  await evaluateMaturations(sql, createMonitorCache(sql, 1), batch);

  const signIns = new SignInService(db, sql);
  const [member] = await sql<{ id: string }[]>`select id from users where email = 'member@acme.test'`;
  const invitation = await createInvitation(db, { userId: member.id });
  await signIns.acceptInvitation(invitation.token, "a long enough password");
  const [globex] = await sql<{ id: string }[]>`select id from tenants where name = 'globex'`;
  await createInvitation(db, { tenantId: globex.id, email: "later@globex.test", role: "viewer" });
  // Rows the code of this round no longer leaves behind once everything matured: span rows of
  // traces stored before migration 0017 (written as that writer wrote them), and a trace whose
  // MATURED publish is still owed (migration 0016).
  const stored = await legacyTraces(sql);
  const legacy = stored.slice(0, 2);
  await sql`delete from span_ids where trace_pk = any(${legacy.map((t) => t.id)}::uuid[])`;
  await insertLegacySpanRows(sql, legacy);
  // And span ids as rows of their own and metrics in full, as written between migrations 0017 and 0021.
  await storeSpanIdRows(
    sql,
    stored.slice(2).map((t) => t.id),
  );
  await storeMetricsInFull(sql);
  await openTraces(sql, [{ trace_pk: stored[0].id, tenant_id: stored[0].tenant_id }]);
  // A used first-run token: the platform issues one only while no organization exists (apps/platform/src/setup).
  await sql`insert into setup_tokens (token_hash, used_at) values ('sha-256 of a first-run token', now())`;

  // Tables added after 0019, each through the code that writes it: an evaluator (its version),
  // a run and one recorded judgement (docs/evaluations.md); an SDK instance's ledger report and the
  // reconciliation's verdict (docs/ledger.md).
  const evaluator = await post("/evaluators", {
    service_name: "support-bot",
    name: "short",
    check: { type: "length", max: 500 },
  });
  // A dry run asked for (this stack runs no dispatcher, so it stays queued: its row does not move).
  await post(`/evaluators/${evaluator.id}/runs`, { mode: "dry_run", session_ids: ["conv-1"] });
  await recordEvaluation(
    sql,
    {
      tenantId,
      traceServiceId: serviceId,
      evaluatorId: evaluator.id,
      evaluatorVersion: evaluator.version,
      target: "session",
      entityId: "conv-1",
      transcriptHash: "sha-256 of conv-1's lean transcript",
    },
    {
      // Failed, so it writes no score: a score of source `evaluator` cannot be in a database
      // written before 0019 (whose scores the copy puts under that schema's checks).
      status: "failed",
      value: null,
      reason: null,
      error: "the judge answered 500",
      injectionFlagged: false,
      attempts: 1,
      inputTokens: null,
      outputTokens: null,
      costUsd: null,
      durationMs: 1,
      maturationCount: 1,
      mode: "live",
      scoreName: "short",
      environment: null,
    },
    at,
  );
  // A judgement claimed before its judge call (migration 0042), as the live runner claims one.
  await claimJudgement(
    sql,
    {
      tenantId,
      traceServiceId: serviceId,
      evaluatorId: evaluator.id,
      evaluatorVersion: evaluator.version,
      target: "session",
      entityId: "conv-2",
      transcriptHash: "sha-256 of conv-2's lean transcript",
    },
    new Date(at.getTime() + 60_000),
    at,
  );
  const ledger = createLedgerCounter({ sql, logger: createLogger("silent"), flushEveryMs: 3_600_000 });
  ledger.sdkReport(tenantId, "support-bot", {
    instance: "upgrade-test-instance",
    seq: 1,
    counts: { requested: 3, queue_full: 1, retries_exhausted: 0, refused: 0, sampled_out: 0 },
  });
  await ledger.stop();
  // A dead letter counted from DEAD_LETTERS (its key in ledger_dead_letters, migration 0038).
  const dlHeaders = natsHeaders();
  dlHeaders.set(DL.stream, stack.nats.topology.ingestStream);
  dlHeaders.set(DL.ledger, "1");
  await countDeadLetters(sql, [
    deadLetterCount(stack.nats.topology, 1, Date.now(), {
      data: new TextEncoder().encode(JSON.stringify({ kind: "trace", tenantId, serviceName: "support-bot" })),
      headers: dlHeaders,
    }),
  ]);
  await reconcileOnce({
    sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger: createLogger("silent"),
    options: { settleMs: 0, now: () => Date.now() + 120_000 },
  });

  // The overview rollups are the processor's (its MATURED consumer).
  await waitFor(async () => (await sql`select 1 from overview_session_parts`).length > 0, {
    what: "overview rollups",
    timeoutMs: 60_000,
  });
  // Transcripts are runs since migration 0040; conv-2's as a database written before holds it
  // (an item row per item), which the platform still reads: both tables hold rows.
  const [conv2] = await sql<
    { id: string }[]
  >`select id from sessions where session_id = 'conv-2' and tenant_id = ${tenantId}`;
  await runsToItemRows(sql, [conv2.id]);
}

/** Every table of the schema, as rows (ordered) and as its keys, foreign keys and indexes. */
async function snapshot(sql: postgres.Sql) {
  const tables = (
    await sql<{ t: string }[]>`select tablename as t from pg_tables where schemaname = 'public' order by 1`
  ).map((r) => r.t);
  const rows: Record<string, string[]> = {};
  // traces.payload_bytes (migration 0025) is written by the processor with the payload: a row
  // written before keeps null, by design (maturation counts it at the ingest cap).
  const unset: Record<string, string> = { traces: " - 'payload_bytes'" };
  for (const t of tables)
    rows[t] = (await sql.unsafe(`select (to_jsonb(x)${unset[t] ?? ""})::text as j from "${t}" x order by 1`)).map(
      (r) => r.j as string,
    );
  const constraints = (
    await sql<{ d: string }[]>`
      select c.relname || ' ' || con.conname || ' ' || pg_get_constraintdef(con.oid) as d
      from pg_constraint con join pg_class c on c.oid = con.conrelid
      where con.connamespace = 'public'::regnamespace order by 1`
  ).map((r) => r.d);
  const indexes = (
    await sql<{ d: string }[]>`select indexdef as d from pg_indexes where schemaname = 'public' order by 1`
  ).map((r) => r.d);
  const columns = (
    await sql<{ d: string }[]>`
      select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as d
      from information_schema.columns where table_schema = 'public' order by 1`
  ).map((r) => r.d);
  return { tables, rows, constraints, indexes, columns };
}

/** Every read endpoint's status and exact body, and a few more reads of the re-keyed tables. */
async function answers(): Promise<string[]> {
  const endpoints = [
    ...readEndpoints(f),
    { method: "GET", path: "/telemetry/otel/sessions/support-bot/conv-1/scores" },
    { method: "GET", path: "/scores/configs/support-bot" },
    { method: "GET", path: "/monitors" },
    { method: "GET", path: "/webhooks" },
  ];
  const out: string[] = [];
  for (const e of endpoints) {
    const r = await callPaced(stack, e, { authorization: `Token ${f.keys.owner}` });
    out.push(`${e.method} ${e.path} -> ${r.status} ${JSON.stringify(r.body)}`);
  }
  return out;
}

/** The schema before 0019: the same migrations folder, journal cut before it. */
async function migrateBefore19(sql: postgres.Sql) {
  const before = join(scratch, "migrations");
  cpSync(MIGRATIONS_DIR, before, { recursive: true });
  const journalPath = join(before, "meta/_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8"));
  journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < 19);
  writeFileSync(journalPath, JSON.stringify(journal));
  await migrate(drizzle(sql), { migrationsFolder: before });
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

test("a database written by the schema before 0019 migrates to the same rows, keys and answers", async () => {
  await fillEveryTable();
  await stack.processor?.stop();
  const { sql } = stack.database;
  // Both databases analysed before they answer: a few reads group without sorting, and the
  // order of their groups follows the plan the statistics pick.
  await sql`analyze`;
  const fresh = await snapshot(sql);
  const empty = fresh.tables.filter((t) => fresh.rows[t].length === 0);
  expect(empty).toEqual([]);
  const freshAnswers = await answers();
  expect(freshAnswers.filter((a) => !/ -> 200 /.test(a))).toEqual([]);

  const [{ db: freshName }] = await sql<{ db: string }[]>`select current_database() as db`;
  const oldName = `${freshName}_old`;
  await admin.unsafe(`create database ${oldName}`);
  const old = postgres(withDatabase(adminUrl, oldName), { max: 1, onnotice: () => {} });
  try {
    await migrateBefore19(old);
    const [{ has }] = await old<{ has: boolean }[]>`
      select exists (select 1 from information_schema.columns where table_name = 'webhook_attempts' and column_name = 'tenant_id') as has`;
    expect(has).toBe(false);

    // The rows as that schema holds them (its columns only), in their physical order so that
    // reads which do not sort (a jsonb object's keys built by a hash aggregate) see the same order;
    // foreign keys are not checked while copying (any order of tables): 0019 validates every one it widens.
    // Tables a later migration creates (evaluations, the ledger, ...) were not there before 0019:
    // their rows are copied once the upgrade has created them.
    const before19 = new Set(
      (await old<{ t: string }[]>`select tablename as t from pg_tables where schemaname = 'public'`).map((r) => r.t),
    );
    const copyRows = (into: postgres.Sql, tables: string[]) =>
      into.begin(async (tx) => {
        await tx`set local session_replication_role = replica`;
        for (const t of tables) {
          const [{ json }] = await sql.unsafe(
            `select coalesce(json_agg(x order by x.ctid), '[]')::text as json from "${t}" x`,
          );
          await tx.unsafe(`insert into "${t}" select * from json_populate_recordset(null::"${t}", $1::text::json)`, [
            json,
          ]);
        }
      });
    await copyRows(
      old,
      fresh.tables.filter((t) => before19.has(t)),
    );
    await old.end({ timeout: 5 });

    await runMigrations(withDatabase(adminUrl, oldName));
    const later = fresh.tables.filter((t) => !before19.has(t));
    if (later.length) {
      const upgradedPool = postgres(withDatabase(adminUrl, oldName), { max: 1, onnotice: () => {} });
      try {
        await copyRows(upgradedPool, later);
      } finally {
        await upgradedPool.end({ timeout: 5 });
      }
    }

    // Swap the names: the stack's pool reconnects to the upgraded database under the old name.
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname in (${freshName}, ${oldName}) and pid <> pg_backend_pid()`;
    await admin.unsafe(`alter database ${freshName} rename to ${freshName}_fresh`);
    await admin.unsafe(`alter database ${oldName} rename to ${freshName}`);
    await waitFor(
      () =>
        sql`analyze`.then(
          () => true,
          () => false,
        ),
      { what: "reconnected", timeoutMs: 30_000 },
    );
    const upgraded = await snapshot(sql);
    expect(upgraded.columns).toEqual(fresh.columns);
    expect(upgraded.constraints).toEqual(fresh.constraints);
    expect(upgraded.indexes).toEqual(fresh.indexes);
    for (const t of fresh.tables) expect({ t, rows: upgraded.rows[t] }).toEqual({ t, rows: fresh.rows[t] });
    expect(await answers()).toEqual(freshAnswers);
  } finally {
    await old.end({ timeout: 5 }).catch(() => {});
    await admin.unsafe(`drop database if exists ${freshName}_fresh with (force)`);
    await admin.unsafe(`drop database if exists ${oldName} with (force)`);
  }
}, 180_000);

test("a foreign key 0019 does not name (a table another migration added) is widened the same way, name and cascade kept", async () => {
  const name = `t_up19_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  await admin.unsafe(`create database ${name}`);
  const sql = postgres(withDatabase(adminUrl, name), { max: 1, onnotice: () => {} });
  try {
    await migrateBefore19(sql);
    await sql`create table per_span (tenant_id uuid not null, trace_pk uuid not null references traces (id) on delete cascade, n int)`;
    const [t] = await sql`insert into tenants (name) values ('x') returning id`;
    const [p] = await sql`insert into projects (tenant_id, name) values (${t.id}, 'p') returning id`;
    const [svc] =
      await sql`insert into trace_services (tenant_id, project_id, name) values (${t.id}, ${p.id}, 's') returning id`;
    const [s] = await sql`
      insert into sessions (tenant_id, trace_service_id, session_id, first_activity_at, last_activity_at, last_ingested_at)
      values (${t.id}, ${svc.id}, 's1', now(), now(), now()) returning id`;
    const [tr] = await sql`
      insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, provider, start_time, end_time, received_at)
      values (${t.id}, ${svc.id}, ${s.id}, 'tr', 's1', 'openai', now(), now(), now()) returning id`;
    await sql`insert into per_span (tenant_id, trace_pk, n) values (${t.id}, ${tr.id}, 1)`;

    await runMigrations(withDatabase(adminUrl, name));
    const fks = await sql<{ name: string; def: string }[]>`
      select conname as name, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'per_span'::regclass and contype = 'f'`;
    expect([...fks]).toEqual([
      {
        name: "per_span_trace_pk_fkey",
        def: "FOREIGN KEY (trace_pk, tenant_id) REFERENCES traces(id, tenant_id) ON DELETE CASCADE",
      },
    ]);
    await sql`delete from sessions where id = ${s.id}`;
    expect((await sql`select count(*)::int as n from per_span`)[0].n).toBe(0);
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
  }
});
