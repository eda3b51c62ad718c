import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { consumerBacklog } from "@cellar/shared/nats/consume/lanes";
import type { DeadLetterInfo } from "@cellar/shared/nats/consume";
import { listDeadLetters } from "@cellar/shared/nats/dead-letters";
import { publish } from "@cellar/shared/nats/publish";
import type { IngestMessage } from "@cellar/shared/payloads";
import { startEmbeddedPostgres, type RunningPostgres } from "../scripts/infra/postgres";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

// Postgres stopped for 20 s under a running processor: transient, so nothing is dead-lettered
// and nothing is lost. A Postgres server of this file's own, so stopping it harms no other test.
const scratch = mkdtempSync(join(tmpdir(), "cellar-pg-outage-"));
let pg: RunningPostgres;
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const dead: DeadLetterInfo[] = [];

beforeAll(async () => {
  pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: true });
  stack = await createTestStack({ windowSeconds: 60, startProcessor: false, postgresUrl: pg.url });
  await stack.startProcessor({ consume: { onDeadLetter: (d) => void dead.push(d), policy: { backoffMs: [100] } } });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await pg?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const message = (i: number): IngestMessage =>
  ({
    kind: "trace",
    messageId: `outage-${i}`,
    tenantId: tenant.tenantId,
    serviceName: "support-bot",
    receivedAt: new Date().toISOString(),
    payload: chatTrace({
      sessionId: `outage-${i % 7}`,
      messages: [{ role: "user", content: `message ${i}` }],
      reply: "ok",
    }),
  }) as unknown as IngestMessage;
const stored = async () =>
  (await stack.database.sql<{ n: number }[]>`select count(*)::int as n from traces where session_id like 'outage-%'`)[0]
    .n;

test("Postgres stopped for 20 s: nothing is dead-lettered and every trace sent before, during and after lands", async () => {
  const { js, jsm, topology } = stack.nats;
  let i = 0;
  const send = (n: number) =>
    Promise.all(
      Array.from({ length: n }, () => publish(js, topology, ingestStream, message(++i), { msgID: `outage-${i}` })),
    );
  await send(20);
  await waitFor(async () => (await stored()) === 20, { what: "the first 20 stored" });

  await pg.stop();
  const downAt = Date.now();
  // Arrives while Postgres is down: the processor takes it, fails transiently and keeps it.
  await send(30);
  while (Date.now() - downAt < 20_000) {
    await send(5);
    await Bun.sleep(2_000);
  }
  pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), port: pg.port, persistent: true });
  await send(10);

  await waitFor(async () => (await stored().catch(() => 0)) === i, {
    what: `all ${i} traces stored`,
    timeoutMs: 30_000,
  });
  expect(i).toBeGreaterThanOrEqual(100);
  expect(dead).toEqual([]);
  expect(await listDeadLetters(jsm, topology)).toEqual([]);
  // Rows are visible before their batch is acked (the activity keys are put in between).
  await waitFor(async () => (await consumerBacklog(jsm, ingestStream, topology)) === 0, {
    what: "every INGEST message acked",
  });
}, 90_000);
