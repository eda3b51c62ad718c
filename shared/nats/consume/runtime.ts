import type { JsMsg } from "@nats-io/jetstream";
import type { Logger } from "../../logger.ts";
import type { StreamSpec } from "../catalogue.ts";
import type { ConsumeDeps, DeadPart } from "./types.ts";

const DEFAULT_TRANSIENT = { first: 250, max: 5_000 };

/** One running pull of a durable consumer (pull.ts). */
export interface PullLoop {
  done: Promise<void>;
  stop(): void;
}

/**
 * The state one `consume` call shares between its parts: the stream, the failure policy, the
 * messages in hand (kept alive by a heartbeat), the background work, and whether it is stopping.
 */
export interface ConsumeRuntime<T> {
  spec: StreamSpec<T>;
  deps: ConsumeDeps;
  streamName: string;
  log: Logger;
  maxDeliver: number;
  backoff: readonly number[];
  /** In-place retry delays after a transient failure: first, doubling up to max (ms). */
  transient: { first: number; max: number };
  /** Every message in hand, with when it arrived: the heartbeat keeps their ack deadlines away. */
  held: Map<JsMsg, number>;
  pulls: Set<PullLoop>;
  isStopping(): boolean;
  /** The message is no longer in hand (about to be settled). */
  release(m: JsMsg): void;
  /** A sleep that `stop()` cuts short. */
  sleep(ms: number): Promise<void>;
  /** Background work `close()` waits for. */
  track(p: Promise<void>): Promise<void>;
  /** Stores the message as a dead letter, then acks it (dead-letter.ts). */
  deadLetter(m: JsMsg, value: T | undefined, reason: string): Promise<void>;
  /** Stores one part of the message as a dead letter (the caller acks); false when stopping gave the message back. */
  deadLetterPart(m: JsMsg, part: DeadPart): Promise<boolean>;
  /** Marks the loop stopping, stops every pull and wakes every sleeper. */
  stop(): void;
  /** Waits for the tracked work, then stops the heartbeat. */
  close(): Promise<void>;
}

export type DeadLetterWith = <T>(
  rt: ConsumeRuntime<T>,
  m: JsMsg,
  value: T | undefined,
  reason: string,
) => Promise<void>;

export type DeadLetterPartWith = <T>(rt: ConsumeRuntime<T>, m: JsMsg, part: DeadPart) => Promise<boolean>;

/** The runtime of one `consume` call; its heartbeat runs until `close()`. */
export function createRuntime<T>(
  spec: StreamSpec<T>,
  deps: ConsumeDeps,
  deadLetterWith: DeadLetterWith,
  deadLetterPartWith?: DeadLetterPartWith,
): ConsumeRuntime<T> {
  const consumerSpec = spec.consumer;
  if (!consumerSpec) throw new Error(`stream ${spec.key} has no consumer in the catalogue`);
  const streamName = spec.name(deps.topology);
  let stopping = false;
  const held = new Map<JsMsg, number>();
  const work = new Set<Promise<void>>();
  const sleepers = new Set<() => void>();
  const pulls = new Set<PullLoop>();

  const heartbeatEvery = Math.max(1_000, Math.floor(consumerSpec.ackWaitMs / 3));
  const heartbeat = setInterval(() => {
    const due = Date.now() - heartbeatEvery;
    for (const [m, since] of held) if (since <= due) m.working();
  }, heartbeatEvery);

  const rt: ConsumeRuntime<T> = {
    spec,
    deps,
    streamName,
    log: deps.logger.child({ stream: streamName }),
    maxDeliver: deps.policy?.maxDeliver ?? consumerSpec.maxDeliver,
    backoff: deps.policy?.backoffMs ?? consumerSpec.backoffMs,
    transient: deps.policy?.transientBackoffMs ?? DEFAULT_TRANSIENT,
    held,
    pulls,
    isStopping: () => stopping,
    release: (m) => void held.delete(m),
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          sleepers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        sleepers.add(done);
      }),
    track(p) {
      work.add(p);
      void p.finally(() => work.delete(p));
      return p;
    },
    deadLetter: (m, value, reason) => deadLetterWith(rt, m, value, reason),
    deadLetterPart: (m, part) => {
      if (!deadLetterPartWith) throw new Error(`stream ${spec.key}: this runtime cannot dead-letter parts`);
      return deadLetterPartWith(rt, m, part);
    },
    stop() {
      stopping = true;
      for (const p of [...pulls]) p.stop();
      for (const wake of [...sleepers]) wake();
    },
    async close() {
      await Promise.allSettled([...work]);
      clearInterval(heartbeat);
    },
  };
  return rt;
}
