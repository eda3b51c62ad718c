import {
  JetStreamApiCodes,
  JetStreamApiError,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
} from "@nats-io/jetstream";
import type { Logger } from "../logger.ts";
import { consumersOf, type ConsumerSpec, type StreamSpec } from "./catalogue.ts";
import { writeDeadLetter } from "./dead-letters.ts";
import { createFairSlots } from "./fair-slots.ts";
import { classifyFailure, describeFailure, type FailureKind } from "./failure.ts";
import type { Topology } from "./topology.ts";

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
    /** The retired consumer of a laned stream (catalogue.ts): how often its state is read, and
     * how long nothing may have arrived on its subjects before it is deleted (ms). */
    retired?: { checkEveryMs?: number; quietMs?: number };
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
  /**
   * One message per call, up to maxInFlight at once. On a laned stream each lane may hold at
   * most `perLane` of them (default a quarter) and a freed slot goes to the lane that waited
   * longest (fair-slots.ts).
   */
  each: { maxInFlight: number; perLane?: number };
  handle: (item: Delivery<T>) => Promise<Outcome>;
  /** Messages of the retired consumer of a laned stream (default: `handle`). */
  retired?: (item: Delivery<T>) => Promise<Outcome>;
}

/** The share of a laned stream's in-flight budget one lane may hold. */
export const LANE_SHARE = 0.25;
/** The retired consumer's state is read this often while it drains. */
const RETIRED_CHECK_MS = 30_000;
/** It is deleted only once nothing arrived on its subjects for this long (an older publisher still running). */
export const RETIRED_QUIET_MS = 10 * 60_000;

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
    const info: DeadLetterInfo = {
      stream: streamName,
      subject: m.subject,
      seq: m.seq,
      deliveries: m.info.deliveryCount,
      tenant,
      reason,
    };
    log[spec.consumer?.deadLetterLogLevel ?? "warn"]("message dead-lettered", {
      tenant: tenant ?? null,
      reason,
      seq: m.seq,
      subject: m.subject,
      deliveries: info.deliveries,
    });
    deps.onDeadLetter?.(info);
  }

  /** A failure isolated to one message (permanent or retry kind). */
  async function failed(d: Delivery<T>, err: unknown, kind: FailureKind): Promise<void> {
    const reason = describeFailure(err);
    const count = d.msg.info.deliveryCount;
    if (kind === "permanent") return deadLetter(d.msg, d.value, reason);
    if (count >= maxDeliver)
      return deadLetter(d.msg, d.value, `failed on delivery ${count} of ${maxDeliver}: ${reason}`);
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
    if (attempt === 0 || attempt % 10 === 0)
      log.warn("dependency unavailable; keeping the messages and retrying", {
        size,
        retryInMs: delay,
        attempt,
        err: err as Error,
      });
    await sleep(delay);
    return !stopped;
  }

  // --- batch mode ---------------------------------------------------------------------------
  async function runBatch(
    items: Delivery<T>[],
    handle: (items: Delivery<T>[]) => Promise<void | Outcome[]>,
  ): Promise<void> {
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
        log.warn("batch failed; splitting to isolate the failing message", {
          size: items.length,
          kind,
          err: describeFailure(err),
        });
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

  // --- dispatch ---------------------------------------------------------------------------
  /** Takes one decoded message of a consumer: waits for room, then runs it. */
  type Accept = (d: Delivery<T>) => Promise<void>;
  let acceptFor: (lane: string, handle?: (item: Delivery<T>) => Promise<Outcome>) => Accept;
  let drain: () => Promise<void>;
  let maxMessages: number;
  if ("batch" in mode) {
    if (consumerSpec.lanes) throw new Error(`stream ${spec.key}: lanes are consumed in each mode only`);
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
    acceptFor = () => async (d) => {
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
    const perLane = consumerSpec.lanes
      ? (mode.each.perLane ?? Math.max(1, Math.ceil(maxInFlight * LANE_SHARE)))
      : maxInFlight;
    const slots = createFairSlots(maxInFlight, perLane);
    const inFlight = new Set<Promise<void>>();
    // A lane pulls no more than it may run: the rest stays in the stream for other instances.
    maxMessages = Math.min(perLane, maxInFlight);
    acceptFor =
      (lane, handle = mode.handle) =>
      async (d) => {
        const releaseSlot = await slots.acquire(lane);
        const p: Promise<void> = runOne(d, handle)
          .catch((err) => log.error("message runtime error", { err: err as Error }))
          .finally(() => {
            releaseSlot();
            inFlight.delete(p);
          });
        inFlight.add(p);
        track(p);
      };
    drain = async () => {
      await Promise.all(inFlight);
    };
  }

  interface PullLoop {
    done: Promise<void>;
    stop(): void;
  }
  const pulls = new Set<PullLoop>();
  /** Pulls one durable consumer until stopped (or, `untilGone`, until the consumer is deleted). */
  function pullLoop(durable: string, accept: Accept, opts: { untilGone?: boolean } = {}): PullLoop {
    let messages: ConsumerMessages | undefined;
    let ended = false;
    const loop: PullLoop = {
      stop() {
        ended = true;
        messages?.stop();
      },
      done: (async () => {
        while (!stopped && !ended) {
          try {
            const consumer = await deps.js.consumers.get(streamName, durable);
            messages = await consumer.consume({ max_messages: maxMessages, expires: 5_000 });
            if (stopped || ended) {
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
            if (stopped || ended) break;
            if (opts.untilGone && isNotFound(err)) break;
            log.warn("consume loop interrupted; restarting", { consumer: durable, err: err as Error });
            await sleep(500);
          }
        }
      })(),
    };
    pulls.add(loop);
    void loop.done.finally(() => pulls.delete(loop));
    return loop;
  }

  /**
   * The consumer a laned stream had before lanes (catalogue.ts, `retired`): pulled like a lane
   * while it holds messages, deleted once it has nothing pending or in hand and nothing arrived
   * on its subjects for the quiet period, so an older publisher still running during a rolling
   * upgrade is not cut off. Every instance may try; the first delete wins.
   */
  async function drainRetired(
    durable: string,
    handle: ((item: Delivery<T>) => Promise<Outcome>) | undefined,
  ): Promise<void> {
    const checkEvery = deps.policy?.retired?.checkEveryMs ?? RETIRED_CHECK_MS;
    const quietMs = deps.policy?.retired?.quietMs ?? RETIRED_QUIET_MS;
    let pull: PullLoop | undefined;
    try {
      const jsm = await deps.js.jetstreamManager(false);
      for (let first = true; !stopped; first = false) {
        if (!first) await sleep(checkEvery);
        if (stopped) break;
        let info: ConsumerInfo;
        try {
          info = await jsm.consumers.info(streamName, durable);
        } catch (err) {
          if (isNotFound(err)) break; // never existed (a fresh install) or already deleted
          log.warn("cannot read the retired consumer; retrying", { consumer: durable, err: err as Error });
          continue;
        }
        if (!pull) {
          log.info("draining the consumer lanes replaced", {
            consumer: durable,
            pending: info.num_pending,
            inHand: info.num_ack_pending,
          });
          pull = pullLoop(durable, acceptFor("retired", handle), { untilGone: true });
        }
        if (info.num_pending > 0 || info.num_ack_pending > 0 || Date.now() - lastActive(info) < quietMs) continue;
        try {
          await jsm.consumers.delete(streamName, durable);
          log.info("retired consumer drained and deleted", { consumer: durable });
          break;
        } catch (err) {
          if (isNotFound(err)) break;
          log.warn("cannot delete the drained retired consumer; retrying", { consumer: durable, err: err as Error });
        }
      }
    } catch (err) {
      log.error("retired consumer drain failed", { consumer: durable, err: err as Error });
    }
    pull?.stop();
    await pull?.done;
  }

  const retired = consumerSpec.lanes?.retired;
  const laneLoops = consumersOf(spec as StreamSpec<any>, deps.topology).map((c) =>
    pullLoop(c.durable, acceptFor(c.lane ?? "*")),
  );
  const retiredDrain = retired && "each" in mode ? drainRetired(retired.durable, mode.retired) : Promise.resolve();
  const done = (async () => {
    await Promise.all([...laneLoops.map((l) => l.done), retiredDrain]);
    await drain();
  })();

  return {
    async stop() {
      stopped = true;
      for (const p of [...pulls]) p.stop();
      for (const wake of [...sleepers]) wake();
      await done;
      await Promise.allSettled([...work]);
      clearInterval(heartbeat);
    },
  };
}

function isNotFound(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.ConsumerNotFound || err.code === JetStreamApiCodes.StreamNotFound)
  );
}

/** When the consumer last delivered or saw an ack (its creation time if never). */
function lastActive(info: ConsumerInfo): number {
  const times = [info.delivered?.last_active, info.ack_floor?.last_active, info.created]
    .map((v) => (typeof v === "string" ? Date.parse(v) : NaN))
    .filter((n) => Number.isFinite(n));
  return times.length ? Math.max(...times) : 0;
}
