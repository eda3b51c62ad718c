// Issue 36, figure 1's lateness: an INGEST batch is written in transactions of `itemsPerWrite`
// items (500), one after another. Its activity keys were put only after the last one, so under
// a backlog (batches of 500 messages of 20 items: twenty writes) the first write's sessions were
// put, and fell due, seconds after their rows were in. Each write's keys now go out when that
// write commits (an expired key still means every row before it is in Postgres). Fails on the
// old handler: at the second write the first write's key is not there yet.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { JsMsg } from "@nats-io/jetstream";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createLogger } from "@cellar/shared/logger";
import type { Delivery } from "@cellar/shared/nats/consume";
import type { IngestMessage, IngestStreamMessage } from "@cellar/shared/payloads";
import { ingestHandler } from "../apps/processor/src/consumers/ingest";
import { activityLane, activitySubject } from "../apps/processor/src/maturation/activity";
import { ActivityCoalescer } from "../apps/processor/src/maturation/coalesce";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, type TestStack } from "./helpers/stack";

let stack: TestStack;
let tenantId: string;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenantId = (await bootstrapTenant(stack.database.db, { name: "keys" })).tenantId;
});
afterAll(() => stack?.stop());

const trace = (sessionId: string, id: string): IngestMessage =>
  ({
    kind: "trace",
    tenantId,
    serviceName: "keys-bot",
    messageId: `kp-${id}`,
    receivedAt: new Date().toISOString(),
    payload: chatTrace({ sessionId, messages: [{ role: "user", content: id }], reply: "ok", extra: { trace_id: id } }),
  }) as unknown as IngestMessage;

const delivery = (value: IngestMessage): Delivery<IngestStreamMessage> => ({
  value,
  msg: { seq: 1, info: { deliveryCount: 1 }, headers: natsHeaders() } as unknown as JsMsg,
});

/** Whether the session's activity key is in the bucket (its last message on the key's subject). */
async function sessionKeyPut(sessionId: string): Promise<boolean> {
  const [row] = await stack.database.sql<{ id: string }[]>`select id from sessions where session_id = ${sessionId}`;
  if (!row) return false;
  const subject = activitySubject(stack.nats.topology, { kind: "session", pk: row.id, lane: activityLane(tenantId) });
  return stack.nats.jsm.streams
    .getMessage(`KV_${stack.nats.topology.activityBucket}`, { last_by_subj: subject })
    .then((m) => m !== null)
    .catch(() => false);
}

test("a batch written in several transactions puts each write's activity keys as that write commits", async () => {
  const coalescer = new ActivityCoalescer({
    js: stack.nats.js,
    topology: stack.nats.topology,
    windowSeconds: 60,
    logger: createLogger("silent"),
    minIntervalMs: 0,
  });
  const atWrite: boolean[] = [];
  const handle = ingestHandler(stack.database.sql, coalescer, undefined, {
    maxDeliver: 5,
    itemsPerWrite: 2,
    // Before each later write: is the first write's session (kp-first) already put?
    afterWrite: async () => void atWrite.push(await sessionKeyPut("kp-first")),
  });
  const batch = [
    trace("kp-first", "kp-1"),
    trace("kp-first", "kp-2"),
    trace("kp-later", "kp-3"),
    trace("kp-later", "kp-4"),
  ];
  expect(await handle(batch.map(delivery))).toEqual(batch.map(() => "ack"));
  // afterWrite runs once a write committed, before its keys go out: at the first write's hook the
  // key is not there yet; at the second's, the first write's key is.
  expect(atWrite).toEqual([false, true]);
  expect(await sessionKeyPut("kp-later")).toBe(true);
});
