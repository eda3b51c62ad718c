// A NATS node that accepts a connection, then drops it right after the client's CONNECT (before
// the PONG that ends the handshake): nats.js (@nats-io/nats-core 3.x) left that dial waiting for
// its whole connection timeout (20 s by default) instead of trying again after reconnectTimeWait,
// because the transport's close never failed the handshake's PONG. scripts/patch-deps.mjs fixes
// the client; here the ingest app runs as a process behind a proxy that refuses after CONNECT
// (test/helpers/nats-proxy.ts), and must keep trying, be ready again soon after the node heals,
// and lose nothing it acknowledged.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { connectNats, createTopology, ensureTopology, type NatsHandles } from "@cellar/shared/nats/topology";
import { type AppProcesses, startAppProcesses } from "./helpers/app-processes";
import { createTestDatabase } from "./helpers/infra";
import { startNatsProxy } from "./helpers/nats-proxy";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/wait";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let nats: NatsHandles;
let proxy: Awaited<ReturnType<typeof startNatsProxy>>;
let apps: AppProcesses;
let key: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 2 });
  key = (await bootstrapTenant(database.db, { name: "refused" })).telemetryKey;
  // The apps' own topology (no namespace), read directly: what ingest acknowledged is in INGEST.
  nats = await ensureTopology(await connectNats(process.env.NATS_URL!, "test-refused-admin"), createTopology(""));
  proxy = await startNatsProxy(process.env.NATS_URL!);
  apps = await startAppProcesses(testDb.url, ["ingest"], { env: { NATS_URL: proxy.url } });
}, 120_000);

afterAll(async () => {
  await apps?.stop();
  await proxy?.stop();
  await nats?.nc.close();
  await database?.close();
  await testDb?.drop();
});

const ready = async () => (await fetch(`${apps.ingestUrl}/ready`).catch(() => null))?.status === 200;
const send = async (traceId: string) =>
  (
    await fetch(`${apps.ingestUrl}/raw/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(
        chatTrace({
          sessionId: `refused-${traceId}`,
          messages: [{ role: "user", content: "q" }],
          reply: "a",
          extra: { trace_id: traceId },
        }),
      ),
      signal: AbortSignal.timeout(15_000),
    }).catch(() => null)
  )?.status ?? 0;

test("ingest behind a node that drops every connection at its CONNECT keeps trying, is ready again soon after, and loses nothing it answered 200", async () => {
  await waitFor(ready, { what: "ingest ready", timeoutMs: 30_000 });
  const firstSeq = (await nats.jsm.streams.info(nats.topology.ingestStream)).state.last_seq + 1;
  const acked: string[] = [];
  for (let i = 0; i < 3; i++) if ((await send(`before-${i}`)) === 200) acked.push(`before-${i}`);
  expect(acked).toHaveLength(3);

  proxy.refuseAfterConnect(/^cellar-ingest/);
  await waitFor(async () => !(await ready()), { what: "ingest not ready", timeoutMs: 15_000 });
  const refusedFrom = proxy.refusedAtConnect();
  const during: number[] = [];
  for (let i = 0; i < 4; i++) {
    const status = await send(`during-${i}`);
    during.push(status);
    if (status === 200) acked.push(`during-${i}`);
    await Bun.sleep(1_000);
  }
  // Each of ingest's two connections tries again every reconnectTimeWait (0.5 s): a dial that
  // waited for its 20 s connection timeout instead made one attempt per connection here.
  const attempts = proxy.refusedAtConnect() - refusedFrom;
  expect(attempts).toBeGreaterThanOrEqual(6);
  expect(during.every((s) => s === 503 || s === 200)).toBe(true);

  proxy.allow();
  const healedAt = Date.now();
  await waitFor(ready, { what: "ingest ready again", timeoutMs: 30_000, intervalMs: 100 });
  console.log(
    `refused after CONNECT: ${attempts} attempts refused in about 4 s; ready again ${Date.now() - healedAt} ms after the node healed`,
  );
  for (let i = 0; i < 3; i++) if ((await send(`after-${i}`)) === 200) acked.push(`after-${i}`);
  expect(acked.filter((id) => id.startsWith("after-"))).toHaveLength(3);

  // Nothing lost: every trace answered 200 is one message in INGEST.
  const lastSeq = (await nats.jsm.streams.info(nats.topology.ingestStream)).state.last_seq;
  const stored: string[] = [];
  for (let seq = firstSeq; seq <= lastSeq; seq++) {
    const m = await nats.jsm.streams.getMessage(nats.topology.ingestStream, { seq });
    const id = m ? (m.json() as { payload?: { trace_id?: string } }).payload?.trace_id : undefined;
    if (id) stored.push(id);
  }
  expect(acked.filter((id) => !stored.includes(id))).toEqual([]);
}, 120_000);

test("the nats-core loaded by Bun carries scripts/patch-deps.mjs's handshake fix", () => {
  const protocol = join(import.meta.dir, "../node_modules/@nats-io/nats-core/lib/protocol.js");
  expect(readFileSync(protocol, "utf8")).toContain("cellar patch: nats-core handshake close");
  expect(Bun.resolveSync("@nats-io/nats-core", import.meta.dir)).toContain("node_modules/@nats-io/nats-core/lib/");
});
