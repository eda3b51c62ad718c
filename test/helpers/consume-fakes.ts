import type { JsMsg } from "@nats-io/jetstream";
import { Type } from "@sinclair/typebox";
import { createLogger } from "@cellar/shared/logger";
import { jsonCodec, type StreamSpec } from "@cellar/shared/nats/catalogue";
import { createTopology } from "@cellar/shared/nats/names";
import { connectNats, ensureTopology } from "@cellar/shared/nats/topology";
import { deadLetter } from "@cellar/shared/nats/consume/dead-letter";
import { createRuntime, type ConsumeRuntime } from "@cellar/shared/nats/consume/runtime";
import type { ConsumeDeps, Delivery } from "@cellar/shared/nats/consume/types";

/** Test-only: fake messages and runtimes, and test streams on a real server, for the consume parts' tests. */
export interface FakeMsg {
  seq: number;
  subject: string;
  info: { deliveryCount: number };
  /** What the runtime did to it, in order: "ack", "nak:<ms|->", "term:<reason>", "working". */
  settled: string[];
}

export function fakeMsg(seq: number, deliveryCount = 1, body: unknown = { i: seq, tenantId: "t1" }): FakeMsg & JsMsg {
  const m = {
    seq,
    subject: "t.sub",
    info: { deliveryCount },
    settled: [] as string[],
    data: new TextEncoder().encode(JSON.stringify(body)),
    json: () => body,
    ack: () => void m.settled.push("ack"),
    nak: (ms?: number) => void m.settled.push(`nak:${ms ?? "-"}`),
    term: (reason?: string) => void m.settled.push(`term:${reason}`),
    working: () => void m.settled.push("working"),
  };
  return m as unknown as FakeMsg & JsMsg;
}

export type Item = { i: number; tenantId: string };
export const itemSpec: StreamSpec<Item> = {
  key: "ingest",
  name: () => "FAKE",
  codec: jsonCodec(Type.Object({ i: Type.Integer(), tenantId: Type.String() }), (v) => v.tenantId),
  consumer: {
    durable: "worker",
    ackWaitMs: 30_000,
    maxAckPending: 100,
    maxDeliver: 3,
    backoffMs: [50, 70],
    mode: "each",
  },
};

/** A runtime over fake deps whose dead letters are only recorded (`deadLetters`). */
export function fakeRuntime(
  policy: ConsumeDeps["policy"] = { transientBackoffMs: { first: 1, max: 2 } },
  spec: StreamSpec<Item> = itemSpec,
): ConsumeRuntime<Item> & { deadLetters: Array<{ seq: number; reason: string }> } {
  const deadLetters: Array<{ seq: number; reason: string }> = [];
  const deps = { js: {} as never, topology: createTopology("fake"), logger: createLogger("silent"), policy };
  const rt = createRuntime(spec, deps, async (rt, m, _value, reason) => {
    deadLetters.push({ seq: m.seq, reason });
    rt.release(m);
    m.ack();
  });
  return Object.assign(rt, { deadLetters });
}

export const deliveries = (msgs: Array<FakeMsg & JsMsg>): Delivery<Item>[] =>
  msgs.map((msg) => ({ value: { i: msg.seq, tenantId: "t1" }, msg }));

/** What a lost Postgres connection throws: classified transient (failure.ts). */
export const transientError = () => Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" });

/** A runtime per test, closed (heartbeat stopped) after it. */
export function runtimesClosedAfterEach(afterEach: (fn: () => Promise<void>) => void) {
  const open: Array<ReturnType<typeof fakeRuntime>> = [];
  afterEach(async () => {
    for (const rt of open.splice(0)) await rt.close();
  });
  return (...args: Parameters<typeof fakeRuntime>) => {
    const rt = fakeRuntime(...args);
    open.push(rt);
    return rt;
  };
}

/** A NATS connection with a topology of its own and fresh test streams (a real nats-server, test/preload.ts). */
export async function openTestNats(name: string) {
  const topology = createTopology(`${name}${crypto.randomUUID().replace(/-/g, "").slice(0, 8)}`);
  const nats = await ensureTopology(await connectNats(process.env.NATS_URL!, name), topology);
  const logger = createLogger("silent");
  let n = 0;
  const opened: Array<ConsumeRuntime<Item>> = [];
  return {
    nats,
    topology,
    /** A stream with durable consumers `durables` (default `worker`), declared like a catalogue entry. */
    async stream(durables: string[] = ["worker"]): Promise<{ spec: StreamSpec<Item>; subject: string }> {
      const streamName = `${topology.ingestStream}_T${++n}`;
      const subject = `${topology.subjectPrefix}t${n}`;
      await nats.jsm.streams.add({ name: streamName, subjects: [subject] });
      for (const durable of durables)
        await nats.jsm.consumers.add(streamName, {
          durable_name: durable,
          ack_policy: "explicit" as never,
          ack_wait: 30_000_000_000,
        });
      return { spec: { ...itemSpec, name: () => streamName }, subject };
    },
    /** The real runtime (real dead letters) over this connection. */
    runtime(spec: StreamSpec<Item>, extra: Partial<ConsumeDeps> = {}): ConsumeRuntime<Item> {
      const rt = createRuntime(spec, { ...nats, logger, ...extra }, deadLetter);
      opened.push(rt);
      return rt;
    },
    publish: (subject: string, body: unknown) =>
      nats.js.publish(subject, typeof body === "string" ? body : JSON.stringify(body)),
    async close() {
      for (const rt of opened) {
        rt.stop();
        await rt.close();
      }
      for await (const s of nats.jsm.streams.names())
        if (s.startsWith(topology.ingestStream.split("_")[0])) await nats.jsm.streams.delete(s);
      await nats.nc.drain();
    },
  };
}

/** Polls `fn` until it holds (generous bound: CI is a loaded machine). */
export async function until(fn: () => Promise<boolean> | boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out: ${what}`);
}
