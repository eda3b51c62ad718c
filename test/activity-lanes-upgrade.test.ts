import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { activityStream, consumersOf } from "@cellar/shared/nats/catalogue";
import { ensureTopology } from "@cellar/shared/nats/topology";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { activitySubject } from "../apps/processor/src/maturation/activity";
import { ingestTrace } from "./helpers/payloads";
import { createTestStack, type TestStack, waitFor } from "./helpers/stack";

// Upgrading to the maturation path's tenant lanes (docs/maturation.md, "Tenant lanes"): a
// deployment whose one `processor-activity` consumer (filter `$KV.<bucket>.>`) holds a marker of a
// key written before lanes. The setup's ensureTopology adds the lane consumers and narrows the old
// one to the keys of before lanes; the new processor then matures that session through it.
let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
});
afterAll(() => stack.stop());

test("after the upgrade, a marker of a key written before lanes still matures its session; the old consumer keeps only those keys", async () => {
  const { jsm, nc, topology } = stack.nats;
  const stream = activityStream.name(topology);
  const durable = activityStream.consumer!.durable;
  // The topology as the version before lanes left it: one consumer of every key, no lanes.
  for (const c of consumersOf(activityStream, topology))
    if (c.durable !== durable) await jsm.consumers.delete(stream, c.durable);
  await jsm.consumers.update(stream, durable, { filter_subject: `$KV.${topology.activityBucket}.>` });
  // A session written by that version, its key without a lane, expiring at once.
  const tenant = await bootstrapTenant(stack.database.db, { name: "upgrade" });
  const message = ingestTrace({ tenantId: tenant.tenantId, messageId: "up-1", sessionId: "up-1" });
  const written = await writeIngestBatch(stack.database.sql, [message]);
  const [pk] = written.activeSessionPks;
  await stack.nats.js.publish(activitySubject(topology, { kind: "session", pk, lane: null }), "1", { ttl: "1s" });
  const oldKey = activitySubject(topology, { kind: "session", pk, lane: null });
  await waitFor(
    async () =>
      (await jsm.streams.getMessage(stream, { last_by_subj: oldKey }).catch(() => null))?.header?.get(
        "Nats-Marker-Reason",
      ) === "MaxAge" && (await jsm.consumers.info(stream, durable)).num_pending >= 1,
    { what: "the key's expiry marker pending on the old consumer" },
  );

  // The upgrade: setup, then the new processor.
  await ensureTopology(nc, topology);
  const info = await jsm.consumers.info(stream, durable);
  expect(info.config.filter_subject).toBe(`$KV.${topology.activityBucket}.*.*`);
  for (const c of consumersOf(activityStream, topology))
    expect((await jsm.consumers.info(stream, c.durable)).name).toBe(c.durable);
  await stack.startProcessor();
  const matured = await waitFor(
    async () => {
      const [row] = await stack.database.sql<{ published_count: number; maturation_count: number }[]>`
        select published_count, maturation_count from sessions where id = ${pk}`;
      return row?.published_count === 1 && row;
    },
    { what: "the session of before lanes matured", timeoutMs: 20_000 },
  );
  expect(matured.maturation_count).toBe(1);
});
