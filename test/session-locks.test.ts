import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { createTestStack, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

// A trace insert takes FOR KEY SHARE on its session (the foreign key check). A write or a
// maturation that then locked the session FOR UPDATE waited on it, and two of them holding key
// shares on each other's sessions deadlocked (seen in bench/e2e.ts under load). They lock FOR NO
// KEY UPDATE, which key shares do not block.
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "locks" });
});
afterAll(() => stack.stop());

const message = (sessionId: string, n: number): IngestMessage => ({
  kind: "trace",
  messageId: `${sessionId}-${n}`,
  tenantId: tenant.tenantId,
  serviceName: "support-bot",
  receivedAt: new Date().toISOString(),
  payload: chatTrace({ sessionId, messages: [{ role: "user", content: `q${n}` }], reply: "a" }) as never,
});

test("a write to a session does not wait on another transaction's key-share lock on that session", async () => {
  const sql = stack.database.sql;
  await writeIngestBatch(sql, [message("ks-1", 0)]);
  const [s] = await sql<{ id: string }[]>`select id from sessions where session_id = 'ks-1'`;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const holder = sql.begin(async (tx) => {
    await tx`select id from sessions where id = ${s.id} for key share`;
    held();
    await released;
  });
  await isHeld;
  const write = writeIngestBatch(sql, [message("ks-1", 1)]).then(() => "written");
  const outcome = await Promise.race([write, Bun.sleep(3000).then(() => "blocked")]);
  release();
  await holder;
  await write;
  expect(outcome).toBe("written");
  const [{ seq }] = await sql<{ seq: number }[]>`select activity_seq::int as seq from sessions where id = ${s.id}`;
  expect(seq).toBe(2);
});
