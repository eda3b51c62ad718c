import { expect, test } from "bun:test";
import { INGEST_KIND_RULES, ingestMessageProblem } from "@cellar/shared/ingest-rules";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { classifyFailure } from "@cellar/shared/nats/failure";
import { IngestMessage } from "@cellar/shared/payloads";
import { chatTrace } from "../../../../test/helpers/payloads.ts";
import { kindOf, MESSAGE_KINDS } from "./kinds.ts";

/** The kinds the INGEST message schema admits: the `kind` literal of each member of its union. */
const schemaKinds = (IngestMessage.anyOf as Array<{ properties: { kind: { const: string } } }>).map(
  (m) => m.properties.kind.const,
);

const envelope = {
  messageId: "m-1",
  tenantId: "00000000-0000-4000-8000-000000000001",
  serviceName: "support-bot",
  receivedAt: "2026-11-28T08:00:00.000Z",
};
/** One valid message of every kind INGEST carries. */
const samples: Record<string, Record<string, unknown>> = {
  trace: {
    kind: "trace",
    ...envelope,
    payload: chatTrace({ sessionId: "s-1", messages: [{ role: "user", content: "Hi" }], reply: "Hello." }),
  },
  event: {
    kind: "event",
    ...envelope,
    payload: { name: "checkout", session_id: "s-1", timestamp: "2026-11-28T08:00:00Z" },
  },
  score: {
    kind: "score",
    ...envelope,
    payload: { name: "helpful", value: 1, session_id: "s-1", source: "api", idempotency_key: "k-1" },
  },
};

test("the registry has exactly the kinds INGEST carries: the message schema's, the rules', in one order", () => {
  expect(Object.keys(MESSAGE_KINDS)).toEqual(schemaKinds);
  expect(Object.keys(INGEST_KIND_RULES)).toEqual(schemaKinds);
  for (const [kind, entry] of Object.entries(MESSAGE_KINDS)) {
    expect(entry.kind).toBe(kind as never);
    expect(entry.rules).toBe(INGEST_KIND_RULES[kind as keyof typeof INGEST_KIND_RULES]);
    expect(["alone", "session"]).toContain(entry.writer.stage);
    expect(["opens-trace", "session-activity", "none"]).toContain(entry.maturation);
  }
});

test("every kind's sample decodes through the INGEST codec and reaches its own registry entry", () => {
  expect(Object.keys(samples)).toEqual(schemaKinds);
  for (const [kind, message] of Object.entries(samples)) {
    const copy = structuredClone(message);
    expect(ingestMessageProblem(copy)).toBeNull();
    const data = new TextEncoder().encode(JSON.stringify(message));
    const decoded = ingestStream.codec.decode(`ingest.${kind}.00`, data, undefined);
    expect(decoded).toEqual({ ok: true, value: expect.objectContaining({ kind }) });
    expect(kindOf(copy as { kind: string }).kind).toBe(kind as never);
  }
});

test("a kind outside the registry is refused for good (dead-lettered), never written as another kind", () => {
  for (const kind of ["span", "__proto__", "toString", undefined, 7]) {
    let thrown: unknown;
    try {
      kindOf({ kind });
    } catch (err) {
      thrown = err;
    }
    expect(classifyFailure(thrown)).toBe("permanent");
    const data = new TextEncoder().encode(JSON.stringify({ ...samples.event, kind }));
    expect(ingestStream.codec.decode("ingest.x", data, undefined)).toEqual({
      ok: false,
      error: 'invalid kind: must be "trace", "event" or "score"',
    });
  }
});

test("what storing a kind does to maturation: traces open traces, events are session activity, scores nothing", () => {
  expect(Object.fromEntries(Object.values(MESSAGE_KINDS).map((k) => [k.kind, [k.writer.stage, k.maturation]]))).toEqual(
    {
      trace: ["session", "opens-trace"],
      event: ["session", "session-activity"],
      score: ["alone", "none"],
    },
  );
});
