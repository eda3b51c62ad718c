import { CATALOGUE, consumersOf } from "@cellar/shared/nats/catalogue";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsCluster, type RunningNatsCluster } from "../scripts/infra/nats-cluster";
import { connectNats, createTopology, ensureTopology, type NatsHandles } from "@cellar/shared/nats/topology";
import type { NatsConnection } from "@nats-io/transport-node";

// A 3-node cluster of this file's own: it kills a node.
let dir: string;
let cluster: RunningNatsCluster;
let nc: NatsConnection;
const topology = createTopology("rep");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cellar-nats-cluster-"));
  cluster = await startNatsCluster({ storeDir: dir });
  await cluster.waitHealthy();
  nc = await connectNats(cluster.url, "cluster-test");
});

afterAll(async () => {
  await nc?.close().catch(() => {});
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function replicaCounts(h: NatsHandles) {
  const streams = [
    topology.ingestStream,
    topology.maturedStream,
    topology.deliveriesStream,
    `KV_${topology.activityBucket}`,
    topology.deadLetterStream,
  ];
  const out: Record<string, number> = {};
  for (const s of streams) {
    out[s] = (await h.jsm.streams.info(s)).config.num_replicas;
    for await (const c of h.jsm.consumers.list(s)) out[`${s}/${c.name}`] = c.config.num_replicas ?? 0;
  }
  return out;
}

/**
 * The replica counts once every stream and consumer reports `n`. The cluster applies a scale
 * change asynchronously (the meta leader answers the update, then the peer groups change), so a
 * read right after ensureTopology can still see the old count on one of them (the CI flake at
 * 8be79aa). A count that never settles fails with the counts last read.
 */
async function settledAt(h: NatsHandles, n: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const counts = await replicaCounts(h);
    if (Object.values(counts).every((c) => c === n) || Date.now() > deadline) return counts;
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("NATS_URL with several servers connects, and every stream, consumer and the KV bucket follow NATS_REPLICAS up and down", async () => {
  expect(cluster.url.split(",")).toHaveLength(3);
  const one = await ensureTopology(nc, topology, { replicas: 1 });
  const counts1 = await replicaCounts(one);
  // 5 streams + every durable consumer the catalogue declares (the processor's, the dispatcher's
  // lanes on MATURED and DELIVERIES, and any later one such as the overview's rollups and the
  // ledger's count of dead letters on DEAD_LETTERS)
  const consumers = CATALOGUE.flatMap((spec) => consumersOf(spec, topology)).length;
  expect(consumers).toBeGreaterThanOrEqual(3);
  expect(Object.keys(counts1)).toHaveLength(5 + consumers);
  expect(new Set(Object.values(counts1))).toEqual(new Set([1]));

  const three = await ensureTopology(nc, topology, { replicas: 3 });
  expect(new Set(Object.values(await settledAt(three, 3)))).toEqual(new Set([3]));

  // Back down again (a cluster shrinking to one node's worth of copies).
  const back = await ensureTopology(nc, topology, { replicas: 1 });
  expect(new Set(Object.values(await settledAt(back, 1)))).toEqual(new Set([1]));
  await ensureTopology(nc, topology, { replicas: 3 });
}, 90_000);

test("with 3 replicas a publish is acknowledged while one node is killed, and the node rejoins", async () => {
  const h = await ensureTopology(nc, topology, { replicas: 3 });
  await cluster.waitHealthy();
  const before = (await h.jsm.streams.info(topology.ingestStream)).state.messages;
  await cluster.kill(0);
  let acked = 0;
  const deadline = Date.now() + 20_000;
  while (acked < 20 && Date.now() < deadline) {
    try {
      await h.js.publish(`${topology.subjectPrefix}ingest.trace`, JSON.stringify({ n: acked }), { timeout: 2_000 });
      acked++;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  expect(acked).toBe(20);
  await cluster.restart(0);
  await cluster.waitHealthy();
  expect((await h.jsm.streams.info(topology.ingestStream)).state.messages).toBe(before + 20);
}, 90_000);
