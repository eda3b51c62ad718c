import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import { errors, type NatsConnection } from "@nats-io/transport-node";
import { serviceUnavailable } from "@cellar/shared/errors";
import type { Logger } from "@cellar/shared/logger";
import { ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import type { Topology } from "@cellar/shared/nats/topology";
import type { IngestBatchMessage, IngestStreamMessage } from "@cellar/shared/payloads";
import { nextTurn, onNextTurn } from "@cellar/shared/steps";
import {
  type BuiltMessage,
  batchMessages,
  ingestMessage,
  messageIdFor,
  messageText,
  type StoreInput,
} from "./batch-message.ts";
import { tooLarge } from "./body.ts";

const utf8 = new TextEncoder();

export {
  type BuiltMessage,
  batchMessageIdFor,
  batchMessages,
  ingestMessage,
  ITEMS_PER_TURN,
  messageIdFor,
  messageText,
  type StoreInput,
  splitItems,
} from "./batch-message.ts";

/** Seconds a client is told to wait when JetStream is down or slow. */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

export interface PublisherDeps {
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  now: () => Date;
  maxBodyBytes: number;
  /** How long to wait for JetStream's PubAck before answering 503. */
  publishTimeoutMs: number;
  /** False while the NATS connection is known to be down: answer 503 at once instead of waiting. */
  connected?: () => boolean;
  /** Publishes awaiting a PubAck beyond this are refused with 503 (backpressure, bounded memory). */
  maxInFlight: number;
  /**
   * The largest INGEST message storeAll builds (default maxBodyBytes + ENVELOPE_BYTES, which
   * main.ts checks the server's max_payload covers); items are cut at BATCH_MESSAGE_BYTES below it.
   */
  maxMessageBytes?: number;
  /**
   * The bulk lane (bulk-lane.ts): messages of `minBytes` or more go out on this JetStream client,
   * over a NATS connection of their own; absent, every message goes on `js`.
   */
  bulk?: BulkLaneRoute;
  /** The tenant's turn between slices of a many-item request (shared/fair-turns.ts); default: the next turn. */
  turn?: (tenantId: string) => Promise<void>;
}

/** Where the publisher sends a large message: the bulk lane's client, its threshold, its connection's state. */
export interface BulkLaneRoute {
  js: JetStreamClient;
  /** Messages of at least this many bytes (UTF-8) take the bulk lane (INGEST_BULK_LANE_BYTES). */
  minBytes: number;
  /** False while the bulk lane's connection is known to be down: its messages answer 503 at once. */
  connected?: () => boolean;
}

/** One INGEST message of a request's items (storeAll): its id, whether JetStream had it already, what it holds. */
export interface StoredBatch {
  messageId: string;
  duplicate: boolean;
  inputs: StoreInput[];
}

/** One built message (storeBuilt): its id, whether JetStream had it already, its items per service. */
export interface StoredBuilt {
  messageId: string;
  duplicate: boolean;
  services: Record<string, number>;
}

/** Publishes to INGEST and resolves only after the PubAck; every failure is a 503 (or 413). */
export function createPublisher(deps: PublisherDeps) {
  return createPublishing(deps).store;
}

/**
 * The publisher's two ways in: `store`, one item in one message (the single doors, OTLP), and
 * `storeAll`, the items of one request in one message (the batch door: issue 36), split only
 * where the message would pass BATCH_MESSAGE_BYTES or the stream's maximum payload.
 */
export function createPublishing(deps: PublisherDeps) {
  let inFlight = 0;
  const maxMessageBytes = Math.min(deps.maxMessageBytes ?? deps.maxBodyBytes + ENVELOPE_BYTES, BATCH_MESSAGE_BYTES);
  const unavailable = () =>
    serviceUnavailable("storage temporarily unavailable, retry later", STORAGE_RETRY_AFTER_SECONDS);

  // Publishes issued in one event-loop turn leave in one socket write: nats.js flushes its outbound
  // buffer on a microtask, and each HTTP request is its own task, so without this every message
  // would cost a write (the largest CPU item in profiles of bench/ingest.ts).
  let batch: Array<() => void> = [];
  const flush = () => {
    const starting = batch;
    batch = [];
    for (const fn of starting) fn();
  };
  const send = (start: () => void) => {
    if (batch.push(start) === 1) onNextTurn(flush);
  };

  /**
   * One message to INGEST, after the PubAck; a failure is a 503 (or 413 over max_payload). Its
   * JSON is encoded here (the client would do it anyway) so its size picks the lane: a large
   * message goes on the bulk lane's connection, so the small ones behind it on the ordinary
   * connection are neither written nor acked after it (docs/ingestion.md "The bulk lane").
   */
  async function publishOne(
    value: IngestStreamMessage,
    messageId: string,
    text: string | Uint8Array | undefined,
    door: string | undefined,
  ): Promise<PubAck> {
    const data = typeof text === "object" ? text : utf8.encode(text ?? JSON.stringify(value));
    const bulk = deps.bulk && data.length >= deps.bulk.minBytes ? deps.bulk : undefined;
    const js = bulk ? bulk.js : deps.js;
    const connected = bulk ? bulk.connected : deps.connected;
    if (connected && !connected()) throw unavailable();
    if (inFlight >= deps.maxInFlight) throw unavailable();
    inFlight++;
    try {
      return await new Promise<PubAck>((resolve, reject) =>
        send(() => {
          // A synchronous throw must fail this request only, not the rest of the batch.
          try {
            publish(js, deps.topology, ingestStream, value, {
              msgID: messageId,
              timeout: deps.publishTimeoutMs,
              text: data,
              // Every door checked the body with shared/ingest-rules.ts: the processor trusts that.
              headers: ingestCheckedHeaders(door),
            }).then(resolve, reject);
          } catch (err) {
            reject(err);
          }
        }),
      );
    } catch (err) {
      // The client refuses messages over the server's max_payload (the only invalid argument a
      // publish of a string can have); main.ts checks max_payload covers the body limit.
      if (err instanceof errors.InvalidArgumentError) throw tooLarge(deps.maxBodyBytes);
      deps.logger.warn("publish to INGEST failed", { err: err as Error, messageId });
      throw unavailable();
    } finally {
      inFlight--;
    }
  }

  async function store(input: StoreInput): Promise<{ messageId: string; duplicate: boolean }> {
    const messageId = messageIdFor(input);
    const message = ingestMessage(input, messageId, deps.now().toISOString());
    const text = input.payloadText === undefined ? undefined : messageText(message, input.payloadText);
    const ack = await publishOne(message, messageId, text, input.door);
    return { messageId, duplicate: ack.duplicate };
  }

  /**
   * A request's batch messages (one tenant, one door), each published as it is and resolved after
   * every PubAck: their `duplicate` flags in order, or the first failure (503 or 413).
   */
  async function publishBatches(
    messages: Array<Pick<BuiltMessage, "messageId" | "tenantId" | "receivedAt" | "data">>,
    door: string | undefined,
  ): Promise<boolean[]> {
    const sent = messages.map(async (m) => {
      const value: IngestBatchMessage = {
        kind: "batch",
        messageId: m.messageId,
        tenantId: m.tenantId,
        receivedAt: m.receivedAt,
        items: [],
      };
      return (await publishOne(value, m.messageId, m.data, door)).duplicate;
    });
    const results = await Promise.allSettled(sent);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return results.map((r) => (r as PromiseFulfilledResult<boolean>).value);
  }

  /**
   * Batch messages built elsewhere (offload/, for one request of one tenant and door), as storeAll
   * publishes its own: resolves after every PubAck, or throws the first failure (503 or 413).
   */
  async function storeBuilt(messages: BuiltMessage[], door?: string): Promise<StoredBuilt[]> {
    const duplicates = await publishBatches(messages, door);
    return messages.map((m, i) => ({ messageId: m.messageId, duplicate: duplicates[i], services: m.services }));
  }

  /**
   * The items of one request (one tenant, one door) in one INGEST message, or in as few as the
   * maximum payload allows; resolves after every PubAck. On a failure the whole request fails
   * (503): the client's retry sends the same items, and the messages that did land are
   * duplicates by id (the same items make the same messages) or, failing that, no-ops by the
   * items' natural keys in the processor.
   */
  async function storeAll(inputs: StoreInput[]): Promise<StoredBatch[]> {
    if (inputs.length === 0) return [];
    const tenantId = inputs[0].tenantId;
    const messages = await batchMessages(
      inputs,
      deps.now().toISOString(),
      maxMessageBytes,
      deps.turn ? () => deps.turn!(tenantId) : nextTurn,
    );
    const duplicates = await publishBatches(
      messages.map((m) => ({ ...m.value, data: m.data })),
      inputs[0].door,
    );
    return messages.map((m, i) => ({ messageId: m.value.messageId, duplicate: duplicates[i], inputs: m.inputs }));
  }

  return { store, storeAll, storeBuilt, maxMessageBytes };
}

/** Tracks the connection's status events so the app can refuse fast while NATS is away. */
export function watchConnection(nc: NatsConnection): { connected: () => boolean } {
  let up = !nc.isClosed();
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect" || s.type === "close") up = false;
      else if (s.type === "reconnect") up = true;
    }
  })().catch(() => {});
  return { connected: () => up && !nc.isClosed() };
}

/** Headroom for the IngestMessage envelope and re-serialization around the client's body. */
export const ENVELOPE_BYTES = 64 * 1024;

/**
 * A request's items are cut into INGEST messages of at most this many bytes, even where the
 * payload limit allows more (issue 41 part 4; performance journal, "paced 429s spread, ingest
 * first for a core as shipped, and the host's steal"): the stream stores a message whole, and
 * another tenant's small publish just after a flooder's admitted 2.3 MB batch waited 10-17 ms for
 * its PubAck (11 of its 13 PubAcks over 5 ms in a run came 0-29 ms after one), none after 587 KB
 * OTLP ones; cut at 512 KiB, 2 of 10. An item larger than this still makes one message alone.
 */
export const BATCH_MESSAGE_BYTES = 512 * 1024;

/** Throws when the server's max_payload cannot carry the largest body we accept. */
export function assertPayloadFits(nc: NatsConnection, maxBodyBytes: number): void {
  const max = nc.info?.max_payload ?? 0;
  if (max < maxBodyBytes + ENVELOPE_BYTES) {
    throw new Error(
      `nats-server max_payload is ${max} bytes but INGEST_MAX_BODY_BYTES=${maxBodyBytes} needs at least ${maxBodyBytes + ENVELOPE_BYTES}; raise max_payload in the server config`,
    );
  }
}
