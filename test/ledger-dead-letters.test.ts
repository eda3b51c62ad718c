// The ledger's `dead_lettered` and `replayed`, counted from DEAD_LETTERS once per dead letter
// (docs/ledger.md, "Dead letters, counted from DEAD_LETTERS"): the processor's consumer
// `processor-ledger` on a real nats-server and Postgres, and the count given the same dead letters
// again (a redelivery after a lost ack or a kill).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { DL, listDeadLetters, replayDeadLetter } from "@cellar/shared/nats/dead-letters";
import { publish } from "@cellar/shared/nats/publish";
import type { IngestMessage } from "@cellar/shared/payloads";
import { countDeadLetters, deadLetterCount } from "../apps/processor/src/ledger/dead-letters";
import { chatTrace } from "./helpers/payloads";
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

const counts = async (service: string) =>
  Object.fromEntries(
    (
      await stack.database.sql<{ stage: string; n: number }[]>`
        select stage, sum(count)::int as n from ledger_counts
        where tenant_id = ${tenantId} and service_name = ${service} group by stage order by stage`
    ).map((r) => [r.stage, r.n]),
  );

const letterHeaders = (o: { ledger?: boolean; replay?: boolean; stream?: string } = {}) => {
  const h = natsHeaders();
  h.set(DL.stream, o.stream ?? stack.nats.topology.ingestStream);
  h.set(DL.headers, JSON.stringify(o.replay ? { [DL.replayOf]: ["7"] } : {}));
  if (o.ledger !== false) h.set(DL.ledger, "1");
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
    { stage: "dead_lettered", n: 2 },
    { stage: "replayed", n: 1 },
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
    expect(await counts("poisoned")).toEqual({ dead_lettered: 3, replayed: 1 });
    const keys = await stack.database.sql<{ n: number }[]>`select count(*)::int as n from ledger_dead_letters`;
    expect(keys[0].n).toBeGreaterThanOrEqual(3);
  } finally {
    await processor.stop();
  }
}, 60_000);
