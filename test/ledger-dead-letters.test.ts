// The ledger's `dead_lettered` and `replayed`, counted from DEAD_LETTERS once per original message
// (docs/ledger.md, "Dead letters, counted from DEAD_LETTERS"): the processor's consumer
// `processor-ledger` on a real nats-server and Postgres, the count given the same dead letters
// again (a redelivery after a lost ack or a kill), and the same INGEST message set aside again past
// DEAD_LETTERS's duplicate window.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import {
  deadLetterLedgerConsumer,
  INGEST_DOOR_HEADER,
  ingestStream,
  type StreamSpec,
} from "@cellar/shared/nats/catalogue";
import { DL, listDeadLetters, replayDeadLetter, writeDeadLetter } from "@cellar/shared/nats/dead-letters";
import { publish } from "@cellar/shared/nats/publish";
import type { IngestMessage } from "@cellar/shared/payloads";
import { countDeadLetters, deadLetterCount } from "../apps/processor/src/ledger/dead-letters";
import { chatTrace } from "./helpers/payloads";
import { stageCounts } from "./helpers/ledger-counts";
import { createTestStack, type TestStack, waitFor } from "./helpers/stack";

let stack: TestStack;
let tenantId: string;

beforeAll(async () => {
  stack = await createTestStack({ startProcessor: false });
  tenantId = (await bootstrapTenant(stack.database.db, { name: "dead" })).tenantId;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const counts = (service: string) => stageCounts(stack.database.sql, tenantId, service);

const letterHeaders = (
  o: {
    ledger?: boolean;
    replay?: boolean;
    stream?: string;
    msgId?: string;
    originAt?: string;
    door?: string | null;
  } = {},
) => {
  const h = natsHeaders();
  h.set(DL.stream, o.stream ?? stack.nats.topology.ingestStream);
  // The original's headers: the door it came through (ingest's), and Cellar-Replay-Of for a replay.
  const original: Record<string, string[]> = o.door === null ? {} : { [INGEST_DOOR_HEADER]: [o.door ?? "batch"] };
  if (o.replay) original[DL.replayOf] = ["7"];
  h.set(DL.headers, JSON.stringify(original));
  if (o.ledger !== false) h.set(DL.ledger, "1");
  if (o.msgId) h.set("Nats-Msg-Id", o.msgId);
  if (o.originAt) h.set(DL.originAt, o.originAt);
  return h;
};
const body = (service: string, receivedAt: string, extra: Record<string, unknown> = {}) =>
  new TextEncoder().encode(JSON.stringify({ kind: "trace", tenantId, serviceName: service, receivedAt, ...extra }));

test("a dead letter is counted once however often it is given, at its receivedAt minute; a replay set aside again counts replayed too", async () => {
  const t = stack.nats.topology;
  const at = "2026-11-28T10:15:42.000Z";
  const one = deadLetterCount(t, 1, Date.parse("2026-11-28T10:16:00.500Z"), {
    data: body("once", at),
    headers: letterHeaders(),
  });
  const replay = deadLetterCount(t, 2, Date.parse("2026-11-28T10:17:00Z"), {
    data: body("once", at),
    headers: letterHeaders({ replay: true }),
  });
  expect(one.rows).toEqual([
    {
      tenant_id: tenantId,
      service_name: "once",
      minute: "2026-11-28T10:15:00.000Z",
      stage: "dead_lettered",
      reason: "",
      count: 1,
    },
  ]);
  // Twice in one batch, then both again (the ack lost, or a processor killed after the commit).
  expect(await countDeadLetters(stack.database.sql, [one, one, replay])).toEqual([
    { stage: "dead_lettered", reason: "", n: 2 },
    { stage: "replayed", reason: "", n: 1 },
  ]);
  expect(await countDeadLetters(stack.database.sql, [one, replay])).toEqual([]);
  expect(await counts("once")).toEqual({ dead_lettered: 2, replayed: 1 });
  // The same sequence stored at another instant is another dead letter (DEAD_LETTERS created again).
  const recreated = deadLetterCount(t, 1, Date.parse("2026-11-29T00:00:00Z"), {
    data: body("once", at),
    headers: letterHeaders(),
  });
  await countDeadLetters(stack.database.sql, [recreated]);
  expect(await counts("once")).toEqual({ dead_lettered: 3, replayed: 1 });
});

test("a dead letter is counted by the message it holds: another copy of one INGEST message (past DEAD_LETTERS's duplicate window) adds nothing", async () => {
  const t = stack.nats.topology;
  const at = "2026-11-28T11:15:42.000Z";
  const copy = (dlSeq: number, storedMs: number, o: { msgId?: string; originAt?: string }) =>
    deadLetterCount(t, dlSeq, storedMs, { data: body("copies", at), headers: letterHeaders(o) });
  const origin = { msgId: `${t.ingestStream}:41`, originAt: "2026-11-28T11:15:42.003Z" };
  const first = copy(5, Date.parse("2026-11-28T11:16:00Z"), origin);
  expect([first.origin, first.originAt]).toEqual([`${t.ingestStream}:41`, "2026-11-28T11:15:42.003Z"]);
  expect(await countDeadLetters(stack.database.sql, [first])).toEqual([{ stage: "dead_lettered", reason: "", n: 1 }]);
  // Set aside again 40 minutes later: another message in DEAD_LETTERS, the same original.
  expect(await countDeadLetters(stack.database.sql, [copy(9, Date.parse("2026-11-28T11:56:00Z"), origin)])).toEqual([]);
  // Another item of the same batch message is another original; so is the same sequence stored
  // at another instant (INGEST created again).
  await countDeadLetters(stack.database.sql, [
    copy(10, Date.parse("2026-11-28T11:57:00Z"), { ...origin, msgId: `${t.ingestStream}:41:2` }),
    copy(11, Date.parse("2026-11-28T11:58:00Z"), { ...origin, originAt: "2026-11-29T00:00:00.000Z" }),
  ]);
  expect(await counts("copies")).toEqual({ dead_lettered: 3 });
  // A dead letter without the original's instant (written before Cellar-DL-Origin-At) is its own
  // identity, as migration 0039 keyed those recorded before it.
  const legacy = copy(12, Date.parse("2026-11-28T12:00:00Z"), { msgId: `${t.ingestStream}:42` });
  expect([legacy.origin, legacy.originAt]).toEqual(["dead-letter:12", "2026-11-28T12:00:00.000Z"]);
});

test("a dead letter whose original carried no door (no ingest counted it) counts it accepted, unrecorded, beside dead_lettered; a replay's does not", async () => {
  const t = stack.nats.topology;
  const at = "2026-11-28T12:15:42.000Z";
  const letter = (seq: number, o: { replay?: boolean }) =>
    deadLetterCount(t, seq, Date.parse("2026-11-28T12:16:00Z"), {
      data: body("doorless", at),
      headers: letterHeaders({ door: null, ...o }),
    });
  await countDeadLetters(stack.database.sql, [letter(21, {}), letter(22, { replay: true })]);
  expect(await counts("doorless")).toEqual({ accepted: 1, dead_lettered: 2, replayed: 1 });
  const [row] = await stack.database.sql<{ reason: string }[]>`
    select reason from ledger_counts where tenant_id = ${tenantId} and service_name = 'doorless' and stage = 'accepted'`;
  expect(row.reason).toBe("unrecorded");
});

test("what is not counted from DEAD_LETTERS: an older release's dead letter, another stream's, one with no tenant; a batch counts each item", () => {
  const t = stack.nats.topology;
  const now = Date.now();
  const at = new Date(now).toISOString();
  expect(deadLetterCount(t, 1, now, { data: body("x", at), headers: letterHeaders({ ledger: false }) }).rows).toEqual(
    [],
  );
  expect(
    deadLetterCount(t, 1, now, { data: body("x", at), headers: letterHeaders({ stream: t.maturedStream }) }).rows,
  ).toEqual([]);
  expect(
    deadLetterCount(t, 1, now, { data: new TextEncoder().encode("{not json"), headers: letterHeaders() }).rows,
  ).toEqual([]);
  const h = letterHeaders();
  h.set(DL.tenant, tenantId);
  // A body that does not parse: its recorded tenant, at the minute it was stored, under no service.
  expect(deadLetterCount(t, 1, now, { data: new TextEncoder().encode("{not json"), headers: h }).rows).toEqual([
    {
      tenant_id: tenantId,
      service_name: "",
      minute: new Date(Math.floor(now / 60_000) * 60_000).toISOString(),
      stage: "dead_lettered",
      reason: "",
      count: 1,
    },
  ]);
  const batch = deadLetterCount(t, 1, now, {
    data: body("", at, { kind: "batch", items: [{ serviceName: "a" }, { serviceName: "b" }, { serviceName: "a" }] }),
    headers: letterHeaders(),
  });
  expect(batch.rows.map((r) => [r.service_name, r.stage, r.count])).toEqual([
    ["a", "dead_lettered", 2],
    ["b", "dead_lettered", 1],
  ]);
});

test("the processor counts INGEST's dead letters from DEAD_LETTERS, and a replay dead-lettered again, once each", async () => {
  const { js, jsm, topology } = stack.nats;
  const processor = await stack.startProcessor();
  try {
    const poison = (id: string): IngestMessage =>
      ({
        kind: "trace",
        messageId: id,
        tenantId,
        serviceName: "poisoned",
        receivedAt: new Date().toISOString(),
        // A timestamp the pipeline refuses: dead-lettered at once, on every delivery.
        payload: Object.assign(chatTrace({ sessionId: id, messages: [{ role: "user", content: "q" }], reply: "a" }), {
          start_time: "0000-01-01T00:00:00Z",
          end_time: "0000-01-01T00:00:00Z",
        }),
      }) as unknown as IngestMessage;
    await publish(js, topology, ingestStream, poison("dl-a"), { msgID: "dl-a" });
    await publish(js, topology, ingestStream, poison("dl-b"), { msgID: "dl-b" });
    await waitFor(async () => ((await counts("poisoned")).dead_lettered === 2 ? true : null), {
      what: "two dead letters counted",
      timeoutMs: 20_000,
    });
    const [first] = await listDeadLetters(jsm, topology, { tenant: tenantId, stream: "ingest" });
    expect((await replayDeadLetter(js, jsm, topology, first.seq, { newId: true })).status).toBe("replayed");
    await waitFor(async () => ((await counts("poisoned")).dead_lettered === 3 ? true : null), {
      what: "the replay dead-lettered again, counted",
      timeoutMs: 20_000,
    });
    await new Promise((r) => setTimeout(r, 1_000));
    // Published here without a door (no ingest counted them): each original counts accepted
    // (unrecorded) with its dead letter, the replay does not.
    expect(await counts("poisoned")).toEqual({ accepted: 2, dead_lettered: 3, replayed: 1 });
    const keys = await stack.database.sql<{ n: number }[]>`select count(*)::int as n from ledger_dead_letters`;
    expect(keys[0].n).toBeGreaterThanOrEqual(3);
  } finally {
    await processor.stop();
  }
}, 60_000);

test("the same INGEST message set aside again past DEAD_LETTERS's duplicate window (its first ack lost) is counted once", async () => {
  const { js, jsm, topology } = stack.nats;
  const processor = await stack.startProcessor();
  try {
    const receivedAt = new Date().toISOString();
    const poison = {
      kind: "trace",
      messageId: "dl-late",
      tenantId,
      serviceName: "late",
      receivedAt,
      payload: Object.assign(
        chatTrace({ sessionId: "dl-late", messages: [{ role: "user", content: "q" }], reply: "a" }),
        { start_time: "0000-01-01T00:00:00Z", end_time: "0000-01-01T00:00:00Z" },
      ),
    } as unknown as IngestMessage;
    await publish(js, topology, ingestStream, poison, { msgID: "dl-late" });
    await waitFor(async () => ((await counts("late")).dead_lettered === 1 ? true : null), {
      what: "the dead letter counted",
      timeoutMs: 20_000,
    });
    const [letter] = (await listDeadLetters(jsm, topology, { tenant: tenantId, stream: "ingest" })).filter((d) =>
      d.body.includes("dl-late"),
    );
    // The INGEST message again, as a redelivery would give it, set aside again by the same writer
    // once DEAD_LETTERS no longer remembers the first copy's id (its window shortened to 1 s here,
    // 10 minutes in production): a second message in DEAD_LETTERS.
    const original = await (await js.consumers.get(topology.ingestStream, { opt_start_seq: letter.originalSeq })).next({
      expires: 5_000,
    });
    expect(original?.seq).toBe(letter.originalSeq);
    const dlInfo = await jsm.streams.info(topology.deadLetterStream);
    await jsm.streams.update(topology.deadLetterStream, { ...dlInfo.config, duplicate_window: 1_000_000_000 });
    await waitFor(
      async () => {
        await writeDeadLetter(js, topology, ingestStream as StreamSpec<unknown>, original!, {
          error: "again, after a lost ack",
          tenant: tenantId,
        });
        const copies = (await listDeadLetters(jsm, topology, { tenant: tenantId, stream: "ingest" })).filter(
          (d) => d.originalSeq === letter.originalSeq,
        );
        return copies.length >= 2 ? true : null;
      },
      { what: "a second copy in DEAD_LETTERS", timeoutMs: 15_000, intervalMs: 500 },
    );
    await waitFor(
      async () => {
        const c = await jsm.consumers.info(topology.deadLetterStream, deadLetterLedgerConsumer.consumer!.durable);
        return c.num_pending + c.num_ack_pending === 0 ? true : null;
      },
      { what: "processor-ledger caught up", timeoutMs: 20_000 },
    );
    expect(await counts("late")).toEqual({ accepted: 1, dead_lettered: 1 });
  } finally {
    await processor.stop();
  }
}, 60_000);
