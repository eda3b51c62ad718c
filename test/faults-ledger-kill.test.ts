// The ledger's `stored` when the processor is killed right after writing (issue 41,
// docs/ledger.md "Stored, counted with the rows"): ingest and the processor as separate
// processes on a Postgres and a nats-server of this file's own. The processor is SIGKILLed twice
// at chosen moments, not by luck:
// 1. once every trace sent is written and acknowledged, before any count it held in memory was
//    flushed (test/fixtures/processor-ledger-kill.ts flushes only when stopped): the old code
//    counted `stored` in memory after the write, so these were lost and the books stayed short;
// 2. right after a write commits and before its messages are acknowledged (the fixture's hook):
//    JetStream gives them again to the next processor, which writes them as no-ops.
// Then a processor as deployed reconciles every second: the books must balance with every trace
// counted stored exactly once, nothing set apart as counted twice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type postgres from "postgres";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase } from "@cellar/shared/db/client";
import { consumersOf, ingestStream } from "@cellar/shared/nats/catalogue";
import { listDeadLetters, replayDeadLetter } from "@cellar/shared/nats/dead-letters";
import { createTopology } from "@cellar/shared/nats/names";
import { settledHorizon } from "../apps/processor/src/ledger/reconcile";
import { startAppProcesses } from "./helpers/app-processes";
import { ROOT } from "./helpers/compose";
import { startOwnInfra } from "./helpers/own-infra";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

let infra: Awaited<ReturnType<typeof startOwnInfra>>;
let sql: postgres.Sql;
let stack: Awaited<ReturnType<typeof startAppProcesses>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const FIXTURE = join(ROOT, "test/fixtures/processor-ledger-kill.ts");

beforeAll(async () => {
  infra = await startOwnInfra("faults-ledger-kill");
  sql = infra.sql;
  const database = createDatabase(infra.databaseUrl, { max: 1 });
  tenant = await bootstrapTenant(database.db, { name: "kill" });
  await database.close();
  stack = await startAppProcesses(infra.databaseUrl, ["ingest"], {
    env: { NATS_URL: infra.natsUrl, LEDGER_RECONCILE_SECONDS: "1", INGEST_RATE_LIMIT_PER_SECOND: "0" },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await infra?.stop();
});

let n = 0;
/** Sends `count` traces one by one (each acknowledged by ingest); their trace ids. */
async function send(count: number, o: { key?: string; prefix?: string; service?: string } = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const traceId = `${o.prefix ?? "kill"}-${++n}`;
    const res = await fetch(`${stack.ingestUrl}/raw/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${o.key ?? tenant.telemetryKey}`, "content-type": "application/json" },
      body: JSON.stringify(
        chatTrace({
          sessionId: `ks-${n % 5}`,
          serviceName: o.service ?? "kills",
          messages: [{ role: "user", content: `q ${n}` }],
          reply: "a",
          extra: { trace_id: traceId },
        }),
      ),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    ids.push(traceId);
  }
  return ids;
}

const traceRows = async (tenantId = tenant.tenantId) =>
  (await sql<{ n: number }[]>`select count(*)::int as n from traces where tenant_id = ${tenantId}`)[0].n;

const totals = async (tenantId = tenant.tenantId) =>
  (
    await sql<{ accepted: number; stored: number; trace: number; dead_lettered: number }[]>`
      select coalesce(sum(count) filter (where stage = 'accepted'), 0)::int as accepted,
             coalesce(sum(count) filter (where stage = 'stored'), 0)::int as stored,
             coalesce(sum(count) filter (where stage = 'stored' and reason = 'trace'), 0)::int as trace,
             coalesce(sum(count) filter (where stage = 'dead_lettered'), 0)::int as dead_lettered
      from ledger_counts where tenant_id = ${tenantId}`
  )[0];

test("a processor SIGKILLed after its writes were acknowledged, and again between a commit and its ack: the books balance, each trace counted stored once", async () => {
  const nc = await connect({ servers: infra.natsUrl });
  const jsm = await jetstreamManager(nc);
  const topology = createTopology();
  try {
    // 1. Written and acknowledged, counts (old code) still in the killed process's memory.
    await stack.start("processor", { name: "kill-1", script: FIXTURE });
    const first = await send(30);
    await waitFor(async () => (await traceRows()) === 30, { what: "30 traces written", timeoutMs: 60_000 });
    await waitFor(
      async () => (await settledHorizon(jsm, topology, Number.MAX_SAFE_INTEGER)) === Number.MAX_SAFE_INTEGER,
      {
        what: "every INGEST message acknowledged",
        timeoutMs: 60_000,
      },
    );
    await stack.kill("kill-1");

    // 2. Killed by its own hook right after its first write commits, before the ack.
    const second = await send(20);
    const killed = await stack.start("processor", {
      name: "kill-2",
      script: FIXTURE,
      env: { KILL_AFTER_WRITES: "1" },
    });
    await waitFor(async () => killed.child.signalCode === "SIGKILL", {
      what: "the kill between a commit and its ack",
      timeoutMs: 60_000,
    });
    const rowsAtKill = await traceRows();
    expect(stack.output("kill-2")).toContain("kill fixture: killing the processor");
    expect(rowsAtKill).toBeGreaterThan(30); // that write committed
    // Nothing of it was acknowledged: INGEST still has it for the next processor.
    expect(await settledHorizon(jsm, topology, Number.MAX_SAFE_INTEGER)).toBeLessThan(Number.MAX_SAFE_INTEGER);

    // 3. A processor as deployed writes the rest (the killed write's messages again) and reconciles.
    await stack.start("processor");
    const third = await send(10);
    const lastSentAt = Date.now();
    const all = [...first, ...second, ...third];
    await waitFor(async () => (await traceRows()) === all.length, {
      what: `${all.length} traces written`,
      timeoutMs: 60_000,
    });
    const check = await waitFor(
      async () => {
        const [row] = await sql`select balanced, details from ledger_checks where tenant_id = ${tenant.tenantId}`;
        return row && Date.parse(row.details.to) > lastSentAt ? row : null;
      },
      { timeoutMs: 100_000, intervalMs: 500, what: "a reconciliation round past the run" },
    );
    const t = await totals();
    console.log(
      `ledger after two kills: ${all.length} sent, ${rowsAtKill - 30} rows committed by the write killed before its ack, ` +
        `ledger ${JSON.stringify(t)}, check ${JSON.stringify(check.details)}`,
    );
    expect(t).toEqual({ accepted: all.length, stored: all.length, trace: all.length, dead_lettered: 0 });
    expect(check.balanced).toBe(true);
    expect(check.details.redelivered).toBeUndefined();
    expect(stack.output("processor")).not.toContain("ledger does not balance");
  } finally {
    await nc.close();
  }
}, 300_000);

test("a processor SIGKILLed right after it set a dead letter aside and acknowledged it, then after a replay dead-lettered again: dead_lettered and replayed are counted once each, the books balance", async () => {
  // The first test's processor (as deployed) would take these messages: this test's own processors only.
  await stack.kill("processor");
  const database = createDatabase(infra.databaseUrl, { max: 1 });
  const other = await bootstrapTenant(database.db, { name: "dead" });
  await database.close();
  const nc = await connect({ servers: infra.natsUrl });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const topology = createTopology();
  // A poison trace: the database refuses it (a data exception: dead-lettered at once).
  await sql.unsafe(`
    create or replace function cellar_test_dl_poison() returns trigger language plpgsql as $$
    begin
      if new.trace_id like 'dl-poison-%' then raise exception 'poison trace' using errcode = '22023'; end if;
      return new;
    end $$;
    create trigger cellar_test_dl_poison before insert on traces for each row execute function cellar_test_dl_poison();`);
  const mine = () => listDeadLetters(jsm, topology, { stream: "ingest", tenant: other.tenantId });
  // A replay keeps a dead letter the ledger has not counted yet ("uncounted": one in hand when its
  // processor was killed is counted by the next within the consumer's ack wait): try again, as an admin would.
  const replay = (seq: number) =>
    waitFor(
      async () => {
        const r = await replayDeadLetter(js, jsm, topology, seq, { newId: true, countWaitMs: 1_000 });
        return r.status === "uncounted" ? null : r.status;
      },
      { what: `dead letter ${seq} counted and replayed`, timeoutMs: 60_000, intervalMs: 500 },
    );
  try {
    // 1. Killed right after the dead letter is stored and its INGEST message acknowledged.
    const killed = await stack.start("processor", {
      name: "dl-1",
      script: FIXTURE,
      env: { KILL_AFTER_DEAD_LETTERS: "1" },
    });
    const o = { key: other.telemetryKey, service: "dead-letters" };
    const good = await send(4, { ...o, prefix: "dl-good" });
    await send(1, { ...o, prefix: "dl-poison" });
    await waitFor(async () => killed.child.signalCode === "SIGKILL", {
      what: "the kill after a dead letter",
      timeoutMs: 60_000,
    });
    expect(stack.output("dl-1")).toContain("kill fixture: killing the processor after a dead letter");
    const [letter] = await mine();
    expect(letter).toBeDefined();
    // Its INGEST message was acknowledged: nothing gives it back.
    await waitFor(async () => (await traceRows(other.tenantId)) === good.length, {
      what: "the good traces",
      timeoutMs: 60_000,
    });
    const unacked = async () => {
      let n = 0;
      for (const c of consumersOf(ingestStream, topology)) {
        const info = await jsm.consumers.info(topology.ingestStream, c.durable);
        n += info.num_pending + info.num_ack_pending;
      }
      return n;
    };
    expect(await unacked()).toBe(0);

    // 2. Replayed while the database still refuses it: dead-lettered again, and killed again.
    const again = await stack.start("processor", {
      name: "dl-2",
      script: FIXTURE,
      env: { KILL_AFTER_DEAD_LETTERS: "1" },
    });
    expect(await replay(letter.seq)).toBe("replayed");
    await waitFor(async () => again.child.signalCode === "SIGKILL", {
      what: "the kill after the replay's dead letter",
      timeoutMs: 60_000,
    });
    const [second] = await mine();
    expect(second.seq).toBeGreaterThan(letter.seq);

    // 3. The database takes it; a processor as deployed replays it and reconciles.
    await sql.unsafe("drop trigger cellar_test_dl_poison on traces");
    await stack.start("processor", { name: "dl-3" });
    expect(await replay(second.seq)).toBe("replayed");
    await waitFor(async () => (await traceRows(other.tenantId)) === good.length + 1, {
      what: "the replayed trace stored",
      timeoutMs: 60_000,
    });
    const doneAt = Date.now();
    const check = await waitFor(
      async () => {
        const [row] = await sql`select balanced, details from ledger_checks where tenant_id = ${other.tenantId}`;
        return row && Date.parse(row.details.to) > doneAt ? row : null;
      },
      { timeoutMs: 100_000, intervalMs: 500, what: "a reconciliation round past the run" },
    );
    const t = await totals(other.tenantId);
    const [{ replayed }] = await sql<{ replayed: number }[]>`
      select coalesce(sum(count), 0)::int as replayed from ledger_counts where tenant_id = ${other.tenantId} and stage = 'replayed'`;
    console.log(
      `ledger after two kills at dead letters: ${JSON.stringify({ ...t, replayed })}, check ${JSON.stringify(check.details)}`,
    );
    // 5 accepted; 5 stored (the poison one after its second replay); dead-lettered twice, replayed twice.
    expect({ ...t, replayed }).toEqual({ accepted: 5, stored: 5, trace: 5, dead_lettered: 2, replayed: 2 });
    expect(check.balanced).toBe(true);
    expect(check.details.redelivered).toBeUndefined();
    expect(stack.output("dl-3")).not.toContain("ledger does not balance");
  } finally {
    await sql.unsafe("drop trigger if exists cellar_test_dl_poison on traces");
    await nc.close();
  }
}, 300_000);
