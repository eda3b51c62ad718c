import type { JsMsg, JetStreamClient } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import type { Logger } from "../../logger.ts";
import type { ConsumerSpec } from "../catalogue.ts";
import type { Topology } from "../names.ts";

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
export type Outcome =
  | void
  | "ack"
  | { retryInMs: number }
  | { term: string }
  | { fail: unknown }
  | { deadLetterParts: DeadPart[] };

/**
 * A part of a message that carries several items (INGEST's batches) that can never be stored:
 * with the outcome `{ deadLetterParts }` each is set aside as a dead letter of its own, then the
 * message is acked (its other parts were handled). The dead letter's body is `value`'s JSON, on
 * the subject the catalogue gives `value`, with the message's headers and `msgId` as its
 * Nats-Msg-Id (what a replay publishes with).
 */
export interface DeadPart {
  /** Its place in the message: the dead letter's id is the message's stream, sequence and this. */
  index: number;
  value: unknown;
  reason: string;
  msgId?: string;
}

export interface DeadLetterInfo {
  stream: string;
  subject: string;
  seq: number;
  deliveries: number;
  tenant?: string;
  reason: string;
  /** The message's body (the ledger reads its service and receivedAt: docs/ledger.md). */
  data?: Uint8Array;
  headers?: MsgHdrs;
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
  /**
   * Up to maxBatch messages per call, a partial batch after maxWaitMs; `concurrency` calls at once.
   * Batches take the busy lanes' messages in turn (batch.ts); with `perLane`, each batch holds one
   * lane's messages and a lane runs at most `perLane` batches at once (lane-batch.ts).
   */
  batch: { maxBatch: number; maxWaitMs: number; concurrency?: number; perLane?: number };
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

export interface ConsumeLoop {
  /** Stops pulling, lets the messages in hand finish (a transient retry gives them back). */
  stop(): Promise<void>;
}

/** Takes one decoded message of a consumer: waits for room, then runs it. */
export type Accept<T> = (d: Delivery<T>) => Promise<void>;

/** How a mode (batch.ts, each.ts) runs the messages the pull loops hand it. */
export interface Runner<T> {
  /** The accept function of one lane's pull loop (`handle` overrides the mode's, each mode only). */
  acceptFor(lane: string, handle?: (item: Delivery<T>) => Promise<Outcome>): Accept<T>;
  /** Waits for everything accepted to be settled. */
  drain(): Promise<void>;
  /** How many messages one pull may hold. */
  maxMessages: number;
}
