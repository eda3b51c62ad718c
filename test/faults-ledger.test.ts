// The ledger's reconciliation under faults (issue 41, docs/ledger.md): ingest and the processor as
// separate processes on a Postgres and a nats-server of this file's own, the reconciliation every
// second (so a round lands right after each fault), steady traffic while Postgres is stopped for
// 10 s and NATS for 5 s. No round may say the books do not balance (an error log, ledger_checks),
// and once traffic stops the books balance over every minute of the run with every trace the
// client was told was stored counted and in Postgres: zero lost.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type postgres from "postgres";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase } from "@cellar/shared/db/client";
import { startAppProcesses } from "./helpers/app-processes";
import { startOwnInfra } from "./helpers/own-infra";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

let infra: Awaited<ReturnType<typeof startOwnInfra>>;
let sql: postgres.Sql;
let stack: Awaited<ReturnType<typeof startAppProcesses>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  infra = await startOwnInfra("faults-ledger");
  sql = infra.sql;
  const database = createDatabase(infra.databaseUrl, { max: 1 });
  tenant = await bootstrapTenant(database.db, { name: "books" });
  await database.close();
  stack = await startAppProcesses(infra.databaseUrl, ["ingest", "processor"], {
    env: { NATS_URL: infra.natsUrl, LEDGER_RECONCILE_SECONDS: "1", INGEST_RATE_LIMIT_PER_SECOND: "0" },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await infra?.stop();
});

test("Postgres stopped 10 s and NATS 5 s under traffic: no false imbalance, the books balance after, nothing lost", async () => {
  const acked = new Set<string>();
  const refused = new Map<number, number>();
  let sending = true;
  let n = 0;
  // 20 traces a second over 10 sessions; a refused one is sent again (a new trace), as SDKs retry.
  const sender = (async () => {
    while (sending) {
      const traceId = `lt-${++n}`;
      const res = await fetch(`${stack.ingestUrl}/raw/traces`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
        body: JSON.stringify(
          chatTrace({
            sessionId: `ls-${n % 10}`,
            serviceName: "books",
            messages: [{ role: "user", content: `q ${n}` }],
            reply: "a",
            extra: { trace_id: traceId },
          }),
        ),
        signal: AbortSignal.timeout(15_000),
      }).catch(() => null);
      if (res?.status === 200) acked.add(traceId);
      else refused.set(res?.status ?? 0, (refused.get(res?.status ?? 0) ?? 0) + 1);
      await res?.arrayBuffer().catch(() => {});
      await Bun.sleep(50);
    }
  })();
  // Every verdict a round records, while the faults run and after.
  const alarms: unknown[] = [];
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const rows = await sql`select balanced, details from ledger_checks where tenant_id = ${tenant.tenantId}`.catch(
        () => [],
      );
      for (const r of rows) if (!r.balanced) alarms.push(r.details);
      await Bun.sleep(250);
    }
  })();

  await Bun.sleep(8_000);
  await infra.pg.stop();
  await Bun.sleep(10_000);
  await infra.pg.start();
  await Bun.sleep(8_000);
  await infra.restartNats(5_000);
  await Bun.sleep(8_000);
  sending = false;
  await sender;
  const lastSentAt = Date.now();

  // Every acknowledged trace in Postgres.
  await waitFor(
    async () => {
      const [{ n: rows }] = await sql`select count(*)::int as n from traces where tenant_id = ${tenant.tenantId}`;
      return rows >= acked.size;
    },
    { timeoutMs: 60_000, what: `${acked.size} traces stored` },
  );
  // A round covering the last minute traffic was sent in (settled 10 s after it ends).
  const check = await waitFor(
    async () => {
      const [row] = await sql`select balanced, details from ledger_checks where tenant_id = ${tenant.tenantId}`;
      return row && Date.parse(row.details.to) > lastSentAt ? row : null;
    },
    { timeoutMs: 100_000, intervalMs: 500, what: "a reconciliation round past the run" },
  );
  watching = false;
  await watcher;
  const stored = await sql`select trace_id from traces where tenant_id = ${tenant.tenantId}`;
  const storedIds = new Set(stored.map((r) => r.trace_id as string));
  const lost = [...acked].filter((id) => !storedIds.has(id));
  const [totals] = await sql`
    select coalesce(sum(count) filter (where stage = 'accepted'), 0)::int as accepted,
           coalesce(sum(count) filter (where stage = 'stored'), 0)::int as stored,
           coalesce(sum(count) filter (where stage = 'dead_lettered'), 0)::int as dead_lettered
    from ledger_counts where tenant_id = ${tenant.tenantId}`;
  const log = stack.output("processor");
  console.log(
    `ledger under faults: ${acked.size} acknowledged, refused ${JSON.stringify(Object.fromEntries(refused))}, ` +
      `ledger ${JSON.stringify(totals)}, rows ${storedIds.size}, redelivered ${check.details.redelivered ?? 0}, lost ${lost.length}, alarms ${alarms.length}`,
  );
  expect(acked.size).toBeGreaterThan(100); // 20/s offered; fewer get through on a loaded machine
  expect(lost).toEqual([]);
  expect(alarms).toEqual([]);
  expect(log).not.toContain("ledger does not balance");
  expect(check.balanced).toBe(true);
  // A publish whose PubAck was lost to the NATS restart is stored though the client got a 503:
  // counted accepted (by ingest, or by the recount from INGEST) and stored, once as a row.
  expect(totals.accepted).toBe(storedIds.size);
  expect(storedIds.size).toBeGreaterThanOrEqual(acked.size);
  // A batch whose acknowledgement the NATS restart lost is written again (a no-op) and counts
  // nothing: stored is counted with the rows (docs/ledger.md). Nothing was dead-lettered, so
  // nothing can be set apart as counted twice.
  expect(totals.stored).toBe(totals.accepted);
  expect(check.details.redelivered).toBeUndefined();
  expect(totals.dead_lettered).toBe(0);
}, 300_000);
