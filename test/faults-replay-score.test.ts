// A dead-lettered score replayed by the platform's own NATS user (deploy/nats/users.conf): the
// deployed configuration with its per-app users, the message published by `ingest`, taken and
// dead-lettered by `processor`, replayed by `platform` (the dashboard's dead-letter view does
// exactly this), then taken again by the processor marked as a replay. Before the fix the
// platform user could publish `ingest.trace[.*]` and `ingest.event[.*]` only, so a score's replay
// was refused by the server and the score stayed dead-lettered.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNatsAs } from "@cellar/shared/deploy/nats";
import { consumersOf, ingestStream } from "@cellar/shared/nats/catalogue";
import { DL, listDeadLetters, replayDeadLetter, writeDeadLetter } from "@cellar/shared/nats/dead-letters";
import { laneOf, laneToken } from "@cellar/shared/nats/lanes";
import { createTopology } from "@cellar/shared/nats/topology";
import { devNatsUsers, setUpNatsAsAdmin } from "../scripts/infra/dev-nats";
import { DEPLOY_NATS_CONF, startNatsServer, type RunningNats } from "../scripts/infra/nats-server";

const scratch = mkdtempSync(join(tmpdir(), "cellar-replay-score-"));
const users = devNatsUsers({});
let nats: RunningNats;
const open: NatsConnection[] = [];
const as = async (user: string) => {
  const nc = await connectNatsAs(
    { NATS_URL: nats.url, ...users.appEnv(user), NATS_TLS_CA_FILE: "", NATS_TLS_CERT_FILE: "", NATS_TLS_KEY_FILE: "" },
    `test-${user}`,
  );
  open.push(nc);
  return { nc, js: jetstream(nc), jsm: await jetstreamManager(nc, { checkAPI: false }) };
};

beforeAll(async () => {
  nats = await startNatsServer({
    storeDir: join(scratch, "nats"),
    quiet: true,
    configFile: DEPLOY_NATS_CONF,
    env: users.serverEnv,
  });
  await setUpNatsAsAdmin(nats.url, users.appEnv("admin"));
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(open.map((nc) => nc.close()));
  await nats?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("the platform's NATS user replays a dead-lettered score onto its lane, and the processor takes it again", async () => {
  const t = createTopology();
  const tenantId = "0192f000-0000-7000-8000-00000000beef";
  const score = {
    kind: "score",
    messageId: "score-replay-1",
    tenantId,
    serviceName: "books",
    receivedAt: new Date().toISOString(),
    payload: { name: "helpfulness", value: 0.5, session_id: "s-1" },
  };
  const subject = ingestStream.subjectOf!(t, score as never);
  expect(subject).toBe(`ingest.score.${laneToken(laneOf(tenantId))}`);

  const ingest = await as("ingest");
  await ingest.js.publish(subject, JSON.stringify(score), { msgID: score.messageId });

  // The processor takes it from its lane and dead-letters it (as the consume runtime does).
  const processor = await as("processor");
  const lane = consumersOf(ingestStream, t).find((c) => c.lane === laneToken(laneOf(tenantId)))!;
  const consumer = await processor.js.consumers.get(t.ingestStream, lane.durable);
  const first = await consumer.next({ expires: 5_000 });
  expect(first?.subject).toBe(subject);
  await writeDeadLetter(processor.js, t, ingestStream, first!, { error: "test: refused", tenant: tenantId });
  first!.ack();

  const platform = await as("platform");
  const [dead] = await listDeadLetters(platform.jsm, t);
  expect(dead).toMatchObject({ stream: t.ingestStream, subject });
  const replayed = await replayDeadLetter(platform.js, platform.jsm, t, dead.seq, { newId: true });
  expect(replayed).toMatchObject({ status: "replayed", subject });
  expect(await listDeadLetters(platform.jsm, t)).toEqual([]);

  const again = await consumer.next({ expires: 5_000 });
  expect(again?.subject).toBe(subject);
  expect(again?.headers?.get(DL.replayOf)).toBe(String(dead.seq));
  expect(again?.json()).toEqual(score);
  again!.ack();
}, 60_000);
