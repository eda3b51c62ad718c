import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { consumersOf, deliveriesStream, ingestStream, maturedStream } from "@cellar/shared/nats/catalogue";
import { laneOf, laneToken } from "@cellar/shared/nats/lanes";
import type { DeadLetterInfo } from "@cellar/shared/nats/consume";
import { listDeadLetters } from "@cellar/shared/nats/dead-letters";
import { publish } from "@cellar/shared/nats/publish";
import type { IngestMessage, MaturedMessage } from "@cellar/shared/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

// One bad message never stalls anyone (issue 10): what the three streams do with messages the
// pipeline cannot store, end to end on real NATS and Postgres.
let stack: TestStack;
let acme: Awaited<ReturnType<typeof bootstrapTenant>>;
let globex: Awaited<ReturnType<typeof bootstrapTenant>>;
const dead: DeadLetterInfo[] = [];
const consume = { onDeadLetter: (d: DeadLetterInfo) => void dead.push(d), policy: { backoffMs: [200] } };

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 60, startProcessor: false });
  await stack.startProcessor({ consume });
  await stack.startDispatcher({ consume });
  acme = await bootstrapTenant(stack.database.db, { name: "acme" });
  globex = await bootstrapTenant(stack.database.db, { name: "globex" });
});
afterAll(() => stack.stop());

const post = (tenant: { telemetryKey: string }, body: unknown) =>
  stack.ingestRequest("/raw/traces", body, { authorization: `Bearer ${tenant.telemetryKey}` });
const trace = (sessionId: string, startTime?: string) => {
  const t = chatTrace({
    sessionId,
    messages: [{ role: "user", content: `hello from ${sessionId}` }],
    reply: "hi",
  }) as Record<string, unknown>;
  if (startTime) Object.assign(t, { start_time: startTime, end_time: startTime });
  return t;
};
const traceRow = async (sessionId: string) =>
  (
    await stack.database.sql<
      { start_time: Date; session_id: string }[]
    >`select start_time, session_id from traces where session_id = ${sessionId}`
  )[0];
/** An INGEST message as ingest would publish it, for tests that bypass the HTTP edge. */
const ingestMessage = (tenantId: string, sessionId: string, payload: unknown = trace(sessionId)): IngestMessage =>
  ({
    kind: "trace",
    messageId: `direct-${sessionId}`,
    tenantId,
    serviceName: "support-bot",
    receivedAt: new Date().toISOString(),
    payload,
  }) as IngestMessage;

describe("ingest accepts only what the pipeline can store", () => {
  test("three traces a second apart, the middle one at +23:00: all three land, the middle one as a UTC instant", async () => {
    for (const [id, start] of [["good-1"], ["poison-1", "2026-11-23T10:00:00+23:00"], ["good-2"]] as const) {
      const res = await post(acme, trace(id, start));
      expect(res.status).toBe(200);
      await Bun.sleep(1000);
    }
    for (const id of ["good-1", "good-2", "poison-1"])
      await waitFor(() => traceRow(id), { what: `${id} in Postgres`, timeoutMs: 10_000 });
    expect((await traceRow("poison-1")).start_time.toISOString()).toBe("2026-11-22T11:00:00.000Z");
    expect(dead).toEqual([]);
  });

  test("offsets +16:00 and -23:59 land; year 0000 and offset +24:00 answer 400 naming start_time and store nothing", async () => {
    expect((await post(acme, trace("plus-16", "2026-11-23T10:00:00+16:00"))).status).toBe(200);
    expect((await post(acme, trace("minus-2359", "2026-11-23T10:00:00-23:59"))).status).toBe(200);
    for (const [id, start] of [
      ["year-0", "0000-01-01T00:00:00Z"],
      ["plus-24", "2026-11-23T10:00:00+24:00"],
    ]) {
      const res = await post(acme, trace(id, start));
      expect(res.status).toBe(400);
      expect((await res.json()).error).toStartWith("invalid start_time: ");
    }
    await waitFor(async () => (await traceRow("plus-16")) && (await traceRow("minus-2359")), {
      what: "both traces stored",
    });
    expect((await traceRow("minus-2359")).start_time.toISOString()).toBe("2026-11-24T09:59:00.000Z");
    expect(dead).toEqual([]);
  });
});

describe("messages the pipeline cannot handle go to dead letters, and nobody else waits", () => {
  test("a message Postgres rejects, published straight to INGEST, is dead-lettered within seconds while other tenants' messages around it land", async () => {
    const { js, topology } = stack.nats;
    const unknownTenant = crypto.randomUUID(); // passes the schema; Postgres refuses it (foreign key, 23503)
    const started = Date.now();
    await Promise.all([
      publish(js, topology, ingestStream, ingestMessage(acme.tenantId, "around-1"), { msgID: "around-1" }),
      publish(js, topology, ingestStream, ingestMessage(unknownTenant, "orphan"), { msgID: "orphan" }),
      publish(js, topology, ingestStream, ingestMessage(globex.tenantId, "around-2"), { msgID: "around-2" }),
    ]);
    await waitFor(async () => dead.find((d) => d.tenant === unknownTenant), {
      what: "the dead letter",
      timeoutMs: 5_000,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    await waitFor(async () => (await traceRow("around-1")) && (await traceRow("around-2")), {
      what: "both neighbours stored",
    });
    const letter = (await listDeadLetters(stack.nats.jsm, topology, { stream: "ingest" })).find(
      (d) => d.tenant === unknownTenant,
    )!;
    expect(letter).toMatchObject({
      stream: topology.ingestStream,
      subject: ingestStream.subjectOf!(topology, ingestMessage(unknownTenant, "orphan")),
      deliveries: 1,
    });
    expect(letter.error).toStartWith("23503 ");
    expect(letter.headers["Nats-Msg-Id"]).toEqual(["orphan"]);
    expect(JSON.parse(letter.body).payload.session_id).toBe("orphan");
    expect(await traceRow("orphan")).toBeUndefined();
  });

  test("a schema-invalid message on each of INGEST, MATURED and DELIVERIES is dead-lettered at once; the valid ones beside it are handled", async () => {
    const { js, jsm, topology } = stack.nats;
    const before = dead.length;
    const p = topology.subjectPrefix;
    // INGEST: a timestamp ingest would have refused (year 0000), and a body that is not JSON.
    await publish(
      js,
      topology,
      ingestStream,
      ingestMessage(acme.tenantId, "bad-year", trace("bad-year", "0000-01-01T00:00:00Z")),
      { msgID: "bad-year" },
    );
    await js.publish(`${p}ingest.event`, "{not json");
    await publish(js, topology, ingestStream, ingestMessage(acme.tenantId, "after-bad"), { msgID: "after-bad" });
    // MATURED: no entity; then a valid one for a tenant without subscriptions (acked, nothing sent).
    await js.publish(
      `${p}matured.session.${laneToken(laneOf(acme.tenantId))}`,
      JSON.stringify({ type: "session.matured", tenantId: acme.tenantId }),
    );
    const fine: MaturedMessage = {
      type: "session.matured",
      tenantId: acme.tenantId,
      traceServiceId: crypto.randomUUID(),
      serviceName: "support-bot",
      entityPk: crypto.randomUUID(),
      sessionId: "s",
      maturationCount: 1,
      occurredAt: new Date().toISOString(),
    };
    await publish(js, topology, maturedStream, fine, { msgID: "fine-matured" });
    // DELIVERIES: a number where the id should be; then a valid job whose row is gone (ends by design, not a dead letter).
    await js.publish(`${p}deliveries.attempt.00`, JSON.stringify({ deliveryId: 42 }));
    await publish(js, topology, deliveriesStream, { deliveryId: "msg_gone" }, { msgID: "gone" });

    await waitFor(async () => dead.length - before === 4, { what: "four dead letters", timeoutMs: 5_000 });
    const mine = dead.slice(before);
    expect(mine.map((d) => [d.stream, d.reason]).sort()).toEqual(
      [
        [topology.deliveriesStream, "invalid message: invalid deliveryId: expected string"],
        [topology.ingestStream, "invalid message: body is not valid JSON"],
        [topology.ingestStream, "invalid message: invalid payload.start_time: is outside the years 0100-9999 (UTC)"],
        [topology.maturedStream, "invalid message: invalid maturationCount: expected required property"],
      ].sort(),
    );
    expect(mine.every((d) => d.deliveries === 1)).toBe(true);
    await waitFor(() => traceRow("after-bad"), { what: "the trace after the bad ones" });
    for (const spec of [ingestStream, maturedStream, deliveriesStream]) {
      for (const c of consumersOf(spec, topology)) {
        await waitFor(
          async () => {
            const info = await jsm.consumers.info(spec.name(topology), c.durable);
            return info.num_ack_pending + info.num_pending === 0;
          },
          { what: `${c.durable} consumer settled` },
        );
      }
    }
    expect(await listDeadLetters(jsm, topology, { stream: "deliveries" })).toHaveLength(1);
  });
});
