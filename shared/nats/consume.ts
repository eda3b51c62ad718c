import type { ConsumerMessages, JetStreamClient, JsMsg } from "@nats-io/jetstream";
import type { Logger } from "../logger";
import type { ConsumerSpec, StreamSpec } from "./catalogue";
import { writeDeadLetter } from "./dead-letters";
import { classifyFailure, describeFailure, type FailureKind } from "./failure";
import type { Topology } from "./topology";

/** A decoded message in hand. The runtime settles it; handlers never ack or nak themselves. */
export interface Delivery<T> {
  value: T;
  msg: JsMsg;
}

/**
 * What a handler decided for one message: done (`undefined` / `"ack"`), come back later without
 * it counting as a failure (`retryInMs`: a retry curve, a marker that came early), or finished
 * without success by design (`term`: e.g. the row it points at was deleted), or failed
 * (`fail`: a batch handler that isolates its own messages reports one message's error; the
 * runtime treats it as if that message alone had thrown it).
 * A thrown error is a failure: the runtime classifies it (failure.ts) and isolates the culprit.
 */
export type Outcome = void | "ack" | { retryInMs: number } | { term: string } | { fail: unknown };

export interface DeadLetterInfo {
  stream: string;
  subject: string;
  seq: number;
  deliveries: number;
  tenant?: string;
  reason: string;
}

export interface ConsumeDeps {
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  /** Overrides of the catalogue's failure policy (tests shorten the backoff). */
  policy?: Partial<Pick<ConsumerSpec, "maxDeliver" | "backoffMs">> & {
    /** In-place retry delays after a transient failure: first, doubling up to max (ms). */
    transientBackoffMs?: { first: number; max: number };
  };
  /** Test and metrics hook: runs after a dead letter is stored and the original acked. */
  onDeadLetter?: (info: DeadLetterInfo) => void;
}

export interface BatchMode<T> {
  /** Up to maxBatch messages per call, a partial batch after maxWaitMs; `concurrency` calls at once. */
  batch: { maxBatch: number; maxWaitMs: number; concurrency?: number };
  handle: (items: Delivery<T>[]) => Promise<void | Outcome[]>;
}
export interface EachMode<T> {
  /** One message per call, up to maxInFlight at once. */
  each: { maxInFlight: number };
  handle: (item: Delivery<T>) => Promise<Outcome>;
}

export interface ConsumeLoop {
  /** Stops pulling, lets the messages in hand finish (a transient retry gives them back). */
  stop(): Promise<void>;
}

const DEFAULT_TRANSIENT = { first: 250, max: 5_000 };

/**
 * The one consume runtime: pulls a catalogue stream's durable consumer, decodes each message
 * with the stream's codec, runs the handler, and settles every message according to the
 * stream's policy (catalogue.ts, ConsumerSpec): invalid -> dead letter at once; a failing batch
 * is split until the culprit is alone, the rest committed; transient failures keep the messages
 * and back off; the rest retries with backoff until `maxDeliver`, then dead-letters.
 */
export function consume<T>(spec: StreamSpec<T>, deps: ConsumeDeps, mode: BatchMode<T>): ConsumeLoop;
export function consume<T>(spec: StreamSpec<T>, deps: ConsumeDeps, mode: EachMode<T>): ConsumeLoop;
export function consume<T>(spec: StreamSpec<T>, deps: ConsumeDeps, mode: BatchMode<T> | EachMode<T>): ConsumeLoop {
  const consumerSpec = spec.consumer;
  if (!consumerSpec) throw new Error(`stream ${spec.key} has no consumer in the catalogue`);
  const streamName = spec.name(deps.topology);
  const maxDeliver = deps.policy?.maxDeliver ?? consumerSpec.maxDeliver;
  const backoff = deps.policy?.backoffMs ?? consumerSpec.backoffMs;
  const transient = deps.policy?.transientBackoffMs ?? DEFAULT_TRANSIENT;
  const log = deps.logger.child({ stream: streamName });

  let stopped = false;
  let messages: ConsumerMessages | undefined;
  /** Every message in hand, with when it arrived: the heartbeat keeps their ack deadlines away. */
  const held = new Map<JsMsg, number>();
  const work = new Set<Promise<void>>();
  const sleepers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
    });
  const track = (p: Promise<void>) => {
    work.add(p);
    void p.finally(() => work.delete(p));
    return p;
  };

  const heartbeatEvery = Math.max(1_000, Math.floor(consumerSpec.ackWaitMs / 3));
  const heartbeat = setInterval(() => {
    const due = Date.now() - heartbeatEvery;
    for (const [m, since] of held) if (since <= due) m.working();
  }, heartbeatEvery);

  // --- settling ---------------------------------------------------------------------------
  const release = (m: JsMsg) => held.delete(m);
  async function settle(d: Delivery<T>, outcome: Outcome): Promise<void> {
    if (outcome !== undefined && outcome !== "ack" && "fail" in outcome) {
      const kind = classifyFailure(outcome.fail);
      // Reported, not thrown: nothing to keep in hand, so a transient one comes back shortly.
      if (kind !== "transient") return failed(d, outcome.fail, kind);
      release(d.msg);
      return d.msg.nak(transient.max);
    }
    release(d.msg);
    if (outcome === undefined || outcome === "ack") d.msg.ack();
    else if ("retryInMs" in outcome) d.msg.nak(Math.max(0, Math.round(outcome.retryInMs)));
    else d.msg.term(outcome.term);
  }
  const tenantOf = (value: T | undefined, m: JsMsg): string | undefined => {
    if (value !== undefined) return spec.codec.tenantOf?.(value);
    // An invalid message still often names its tenant; a best guess for the log only.
    try {
      const t = (m.json() as { tenantId?: unknown })?.tenantId;
      return typeof t === "string" ? t.slice(0, 200) : undefined;
    } catch {
      return undefined;
    }
  };

  /** Stores the message in DEAD_LETTERS (retrying while NATS is away), then acks it. */
  async function deadLetter(m: JsMsg, value: T | undefined, reason: string): Promise<void> {
    const tenant = tenantOf(value, m);
    for (let attempt = 0; ; attempt++) {
      try {
        await writeDeadLetter(deps.js, deps.topology, spec as StreamSpec<unknown>, m, { error: reason, tenant });
        break;
      } catch (err) {
        if (stopped) return void (release(m), m.nak());
        log.warn("could not store a dead letter; retrying", { seq: m.seq, err: err as Error });
        await sleep(Math.min(transient.max, transient.first * 2 ** attempt));
      }
    }
    release(m);
    m.ack();
    const info: DeadLetterInfo = { stream: streamName, subject: m.subject, seq: m.seq, deliveries: m.info.deliveryCount, tenant, reason };
    log.warn("message dead-lettered", { tenant: tenant ?? null, reason, seq: m.seq, subject: m.subject, deliveries: info.deliveries });
    deps.onDeadLetter?.(info);
  }

  /** A failure isolated to one message (permanent or retry kind). */
  async function failed(d: Delivery<T>, err: unknown, kind: FailureKind): Promise<void> {
    const reason = describeFailure(err);
    const count = d.msg.info.deliveryCount;
    if (kind === "permanent") return deadLetter(d.msg, d.value, reason);
    if (count >= maxDeliver) return deadLetter(d.msg, d.value, `failed on delivery ${count} of ${maxDeliver}: ${reason}`);
    const delay = backoff[Math.min(count - 1, backoff.length - 1)] ?? 1_000;
    log.error("message failed; will retry", { seq: d.msg.seq, delivery: count, retryInMs: delay, err: err as Error });
    release(d.msg);
    d.msg.nak(delay);
  }

  /** Gives messages back at once (stopping during a transient outage): another instance takes them. */
  const giveBack = (items: Delivery<T>[]) => {
    for (const d of items) {
      release(d.msg);
      d.msg.nak();
    }
  };

  /** Waits out a transient failure; false when stopping (the caller gives the messages back). */
  async function waitTransient(attempt: number, size: number, err: unknown): Promise<boolean> {
    if (stopped) return false;
    const delay = Math.min(transient.max, transient.first * 2 ** Math.min(attempt, 20));
    if (attempt === 0 || attempt % 10 === 0) log.warn("dependency unavailable; keeping the messages and retrying", { size, retryInMs: delay, attempt, err: err as Error });
    await sleep(delay);
    return !stopped;
  }

  // --- batch mode ---------------------------------------------------------------------------
  async function runBatch(items: Delivery<T>[], handle: (items: Delivery<T>[]) => Promise<void | Outcome[]>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let outcomes: void | Outcome[];
      try {
        outcomes = await handle(items);
      } catch (err) {
        const kind = classifyFailure(err);
        if (kind === "transient") {
          if (await waitTransient(attempt, items.length, err)) continue;
          return giveBack(items);
        }
        if (items.length === 1) return failed(items[0], err, kind);
        // Split until the culprit is alone: the halves that pass are committed.
        log.warn("batch failed; splitting to isolate the failing message", { size: items.length, kind, err: describeFailure(err) });
        const mid = items.length >> 1;
        await runBatch(items.slice(0, mid), handle);
        await runBatch(items.slice(mid), handle);
        return;
      }
      await Promise.all(items.map((d, i) => settle(d, outcomes ? outcomes[i] : undefined)));
      return;
    }
  }

  // --- each mode ----------------------------------------------------------------------------
  async function runOne(d: Delivery<T>, handle: (item: Delivery<T>) => Promise<Outcome>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let outcome: Outcome;
      try {
        outcome = await handle(d);
      } catch (err) {
        const kind = classifyFailure(err);
        if (kind === "transient") {
          if (await waitTransient(attempt, 1, err)) continue;
          return giveBack([d]);
        }
        return failed(d, err, kind);
      }
      return settle(d, outcome);
    }
  }

  // --- dispatch -----------------------------------------------------------------------------
  let accept: (d: Delivery<T>) => Promise<void>;
  let drain: () => Promise<void>;
  let maxMessages: number;
  if ("batch" in mode) {
    const { maxBatch, maxWaitMs } = mode.batch;
    const concurrency = Math.max(1, mode.batch.concurrency ?? 1);
    const running = new Set<Promise<void>>();
    let buffer: Delivery<T>[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Batches start in order: a timer flush and a full-buffer flush never overtake each other.
    let starting: Promise<void> = Promise.resolve();
    const flush = (): Promise<void> => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (buffer.length === 0) return starting;
      const batch = buffer;
      buffer = [];
      starting = starting.then(async () => {
        while (running.size >= concurrency) await Promise.race(running);
        const p: Promise<void> = runBatch(batch, mode.handle)
          .catch((err) => log.error("batch runtime error", { err: err as Error }))
          .finally(() => running.delete(p));
        running.add(p);
        track(p);
      });
      return starting;
    };
    maxMessages = Math.max(maxBatch * 2, 100);
    accept = async (d) => {
      buffer.push(d);
      if (buffer.length >= maxBatch) await flush();
      else if (!timer) timer = setTimeout(flush, maxWaitMs);
    };
    drain = async () => {
      await flush();
      await Promise.all(running);
    };
  } else {
    const { maxInFlight } = mode.each;
    const inFlight = new Set<Promise<void>>();
    maxMessages = maxInFlight;
    accept = async (d) => {
      while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
      const p: Promise<void> = runOne(d, mode.handle)
        .catch((err) => log.error("message runtime error", { err: err as Error }))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      track(p);
    };
    drain = async () => {
      await Promise.all(inFlight);
    };
  }

  const done = (async () => {
    while (!stopped) {
      try {
        const consumer = await deps.js.consumers.get(streamName, consumerSpec.durable);
        messages = await consumer.consume({ max_messages: maxMessages, expires: 5_000 });
        if (stopped) {
          messages.stop(); // stop() came while this pull was being set up
          break;
        }
        for await (const m of messages) {
          held.set(m, Date.now());
          const decoded = spec.codec.decode(m.subject, m.data, m.headers);
          if (!decoded.ok) {
            track(deadLetter(m, undefined, `invalid message: ${decoded.error}`));
            continue;
          }
          await accept({ value: decoded.value, msg: m });
        }
      } catch (err) {
        if (stopped) break;
        log.warn("consume loop interrupted; restarting", { err: err as Error });
        await sleep(500);
      }
    }
    await drain();
  })();

  return {
    async stop() {
      stopped = true;
      messages?.stop();
      for (const wake of [...sleepers]) wake();
      await done;
      await Promise.allSettled([...work]);
      clearInterval(heartbeat);
    },
  };
}
