// A dead letter deleted (replayed or purged) while no processor consumes DEAD_LETTERS is still
// counted in the ledger (docs/ledger.md, "Dead letters, counted from DEAD_LETTERS"): the platform's
// replay and the admin CLI's replay and purge count it themselves, by the same key as the
// processor's `processor-ledger`, before they delete it; counted by both, it counts once. On the old
// code the deleter waited for a processor that was not there, deleted, and nothing was counted.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { deadLetterLedgerConsumer, ingestStream, type StreamSpec } from "@cellar/shared/nats/catalogue";
import { listDeadLetters, writeDeadLetter } from "@cellar/shared/nats/dead-letters";
import { publish } from "@cellar/shared/nats/publish";
import type { IngestMessage } from "@cellar/shared/payloads";
import { runAdmin } from "./helpers/admin-cli";
import { chatTrace } from "./helpers/payloads";
import { stageCounts } from "./helpers/ledger-counts";
import { createTestStack, type TestStack, waitFor } from "./helpers/stack";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "deleted-letters" });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const counts = (service: string) => stageCounts(stack.database.sql, tenant.tenantId, service);

/** A trace the pipeline refuses on every delivery (year 0000), published to INGEST without a door. */
const poison = (id: string, service: string): IngestMessage =>
  ({
    kind: "trace",
    messageId: id,
    tenantId: tenant.tenantId,
    serviceName: service,
    receivedAt: new Date().toISOString(),
    payload: Object.assign(chatTrace({ sessionId: id, messages: [{ role: "user", content: "q" }], reply: "a" }), {
      start_time: "0000-01-01T00:00:00Z",
      end_time: "0000-01-01T00:00:00Z",
    }),
  }) as unknown as IngestMessage;

/** Sets `id` aside as the consume runtime does (writeDeadLetter) with no processor running; its seq in DEAD_LETTERS. */
async function setAside(id: string, service: string): Promise<number> {
  const { js, jsm, topology } = stack.nats;
  const ack = await publish(js, topology, ingestStream, poison(id, service), { msgID: id });
  const original = await (await js.consumers.get(topology.ingestStream, { opt_start_seq: ack.seq })).next({
    expires: 5_000,
  });
  expect(original?.seq).toBe(ack.seq);
  await writeDeadLetter(js, topology, ingestStream as StreamSpec<unknown>, original!, {
    error: "refused for the test",
    tenant: tenant.tenantId,
  });
  const letter = (await listDeadLetters(jsm, topology, { stream: "ingest" })).find((d) => d.originalSeq === ack.seq);
  return letter!.seq;
}

const ledgerCaughtUp = () =>
  waitFor(
    async () => {
      const c = await stack.nats.jsm.consumers.info(
        stack.nats.topology.deadLetterStream,
        deadLetterLedgerConsumer.consumer!.durable,
      );
      return c.delivered.stream_seq > 0 && c.num_pending + c.num_ack_pending === 0;
    },
    { what: "processor-ledger caught up", timeoutMs: 30_000 },
  );

const admin = (...args: string[]) =>
  runAdmin(["dead-letters", ...args, "--namespace", stack.nats.topology.subjectPrefix.slice(0, -1)], {
    databaseUrl: stack.databaseUrl,
  });

test("replayed through the platform while no processor runs: counted at the replay; the processor started later adds only the replay's own dead letter", async () => {
  const seq = await setAside("del-replay", "replayed-alone");
  const res = await stack.platformRequest(`/dead-letters/${seq}/replay`, { method: "POST", token: tenant.platformKey });
  expect([res.status, await res.json()]).toEqual([
    200,
    { replayed: 1, more: false, results: [{ seq, status: "replayed" }] },
  ]);
  // Published without a door: its count holds accepted (unrecorded) beside dead_lettered.
  expect(await counts("replayed-alone")).toEqual({ accepted: 1, dead_lettered: 1 });

  // A processor now: the replay is refused again and set aside (dead_lettered and replayed from its
  // new dead letter); the deleted one is not there to count, and would add nothing if it were.
  let processor: Awaited<ReturnType<TestStack["startProcessor"]>> | undefined = await stack.startProcessor();
  try {
    await waitFor(async () => ((await counts("replayed-alone")).replayed === 1 ? true : null), {
      what: "the replay's dead letter counted",
      timeoutMs: 30_000,
    });
    await ledgerCaughtUp();
    expect(await counts("replayed-alone")).toEqual({ accepted: 1, dead_lettered: 2, replayed: 1 });

    // Counted by the processor first, then replayed through the platform: counted once.
    const ingestAck = await publish(stack.nats.js, stack.nats.topology, ingestStream, poison("del-both", "both"), {
      msgID: "del-both",
    });
    await waitFor(async () => ((await counts("both")).dead_lettered === 1 ? true : null), {
      what: "the processor's count",
      timeoutMs: 30_000,
    });
    await processor.stop();
    processor = undefined;
    const [letter] = (await listDeadLetters(stack.nats.jsm, stack.nats.topology, { stream: "ingest" })).filter(
      (d) => d.originalSeq === ingestAck.seq,
    );
    const again = await stack.platformRequest(`/dead-letters/${letter.seq}/replay`, {
      method: "POST",
      token: tenant.platformKey,
    });
    expect(again.status).toBe(200);
    expect(await counts("both")).toEqual({ accepted: 1, dead_lettered: 1 });
  } finally {
    await processor?.stop();
  }
}, 90_000);

test("replayed and purged by the admin CLI while no processor runs: each counted once before it is deleted", async () => {
  const one = await setAside("del-cli-1", "cli");
  const two = await setAside("del-cli-2", "cli");
  await setAside("del-cli-3", "cli");
  const earlier = await counts("replayed-alone");
  const replayed = admin("replay", "--seq", String(one), "--new-id");
  expect([replayed.code, replayed.json?.replayed, replayed.stderr]).toEqual([0, 1, ""]);
  expect(await counts("cli")).toEqual({ accepted: 1, dead_lettered: 1 });

  const purgedOne = admin("purge", "--seq", String(two));
  expect([purgedOne.code, purgedOne.json]).toEqual([0, { purged: 1 }]);
  expect(await counts("cli")).toEqual({ accepted: 2, dead_lettered: 2 });

  // A purge of every INGEST dead letter counts each first: the third, and the previous test's
  // replay set aside again, which the processor counted already (nothing added for it).
  expect(admin("purge", "--stream", "ingest").json).toEqual({ purged: 2 });
  expect(admin("purge", "--all").json).toEqual({ purged: 0 });
  expect(await counts("cli")).toEqual({ accepted: 3, dead_lettered: 3 });
  expect(await counts("replayed-alone")).toEqual(earlier);
  expect(await listDeadLetters(stack.nats.jsm, stack.nats.topology, { stream: "ingest" })).toEqual([]);
}, 90_000);
