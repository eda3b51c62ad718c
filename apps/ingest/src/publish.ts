import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import { errors, type NatsConnection } from "@nats-io/transport-node";
import { createHash } from "node:crypto";
import { canonicalJson } from "@cellar/shared/crypto";
import { serviceUnavailable } from "@cellar/shared/errors";
import type { Logger } from "@cellar/shared/logger";
import { ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import type { Topology } from "@cellar/shared/nats/topology";
import type {
  EventPayload,
  IngestMessage,
  IngestBatchMessage,
  IngestScoreMessage,
  IngestStreamMessage,
  OtlpTracePayload,
  TracePayload,
} from "@cellar/shared/payloads";
import { nextTurn, onNextTurn, sliceClock } from "@cellar/shared/steps";
import { tooLarge } from "./body.ts";

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
  /** The largest INGEST message storeAll builds (default maxBodyBytes + ENVELOPE_BYTES, which main.ts checks the server's max_payload covers). */
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

const utf8 = new TextEncoder();

export interface StoreInput {
  kind: IngestMessage["kind"];
  tenantId: string;
  serviceName: string;
  payload: TracePayload | EventPayload | OtlpTracePayload | IngestScoreMessage["payload"];
  /**
   * The text the message id hashes: JSON.stringify of the body as parsed, before validation
   * normalised it (the single and batch doors both give it), or what a door derives from its
   * input deterministically (OTLP). Absent: the canonical JSON of the payload.
   */
  idSource?: string;
  /**
   * Text the id hashes before `idSource` (the OTLP doors' "otlp\n"): the id of `idPrefix +
   * idSource`, without building that string (a copy of every span's JSON).
   */
  idPrefix?: string;
  /**
   * JSON.stringify of `payload`, when the door has it (the id source of a body validation left
   * as parsed): the message is built around it instead of serialising the payload again.
   */
  payloadText?: string;
  /** The door it came through: a header the ledger recounts `accepted` from (docs/ledger.md). */
  door?: string;
}

/** The INGEST message of a door's input, its keys in messageText's order. */
export function ingestMessage(input: StoreInput, messageId: string, receivedAt: string): IngestMessage {
  return {
    kind: input.kind,
    tenantId: input.tenantId,
    serviceName: input.serviceName,
    payload: input.payload,
    messageId,
    receivedAt,
  } as IngestMessage;
}

/**
 * The INGEST message's JSON with `payloadText` (JSON.stringify of its payload) spliced in: the
 * same text as JSON.stringify(message), one serialisation of the payload fewer per message.
 */
export function messageText(message: IngestMessage, payloadText: string): string {
  const s = JSON.stringify;
  return `{"kind":${s(message.kind)},"tenantId":${s(message.tenantId)},"serviceName":${s(message.serviceName)},"payload":${payloadText},"messageId":${s(message.messageId)},"receivedAt":${s(message.receivedAt)}}`;
}

/**
 * Same tenant + service + kind + body = same Nats-Msg-Id, so a client retry within the stream's
 * duplicate window is stored once (and counted once downstream), whichever door (/raw/traces or
 * an item of /raw/batch) each attempt came through. The body is hashed as JSON.stringify of its
 * parse: the same text for the same body in both doors, equal to the raw bytes for a compact
 * body (what JSON.stringify-based clients send), ~3 us for a 3.5 KB trace against ~35-55 us for
 * sorted-key canonical JSON (docs/performance.md).
 */
export function messageIdFor(input: Omit<StoreInput, "payload"> & { payload: unknown }): string {
  // node:crypto rather than crypto.subtle: synchronous and ~4x faster on the hot path.
  const h = createHash("sha256").update(`${input.tenantId}\n${input.kind}\n${input.serviceName}\n`);
  // The prefix and the source hashed one after the other: the digest of their concatenation.
  if (input.idPrefix !== undefined) h.update(input.idPrefix);
  return h.update(input.idSource ?? canonicalJson(input.payload)).digest("hex");
}

/** One INGEST message of a request's items (storeAll): its id, whether JetStream had it already, what it holds. */
export interface StoredBatch {
  messageId: string;
  duplicate: boolean;
  inputs: StoreInput[];
}

/** Room a batch message keeps for its envelope (kind, ids, tenant, receivedAt) besides its items. */
const BATCH_ENVELOPE_BYTES = 512;

/**
 * A batch item's JSON, the IngestMessage it stands for without the batch's tenant and receivedAt,
 * as its two pieces: the short head, and the payload's JSON (the door's text when it has one), so
 * the message's bytes are written from them without a copy of each item's text (batchMessages).
 */
function itemPieces(input: StoreInput, messageId: string): { head: string; payload: string } {
  const s = JSON.stringify;
  return {
    head: `{"kind":${s(input.kind)},"serviceName":${s(input.serviceName)},"messageId":${s(messageId)},"payload":`,
    payload: input.payloadText ?? s(input.payload),
  };
}

/**
 * The items in order, cut into runs whose message fits `maxBytes` (an item alone always makes a
 * message, however large: the server refuses one over its max_payload, answered 413).
 */
export function splitItems<T>(items: T[], bytesOf: (item: T) => number, maxBytes: number): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let bytes = BATCH_ENVELOPE_BYTES;
  for (const item of items) {
    const size = bytesOf(item) + 1;
    if (run.length > 0 && bytes + size > maxBytes) {
      runs.push(run);
      run = [];
      bytes = BATCH_ENVELOPE_BYTES;
    }
    run.push(item);
    bytes += size;
  }
  if (run.length) runs.push(run);
  return runs;
}

/** A batch message's id: its items' ids (each already names tenant, kind, service and body), in order. */
export function batchMessageIdFor(itemIds: string[]): string {
  return createHash("sha256")
    .update(`batch\n${itemIds.join("\n")}`)
    .digest("hex");
}

/**
 * Items a many-item request handles between two yields to the event loop. A 500-span OTLP request
 * or a 1,000-item batch is otherwise one long turn (hundreds of ms on a loaded machine) that
 * every other tenant's request waits behind (issue 41, bench/flood.ts); 50 items is about 1-3 ms
 * on a quiet machine, and a slice also ends after TURN_BUDGET_MS (shared/steps.ts) on a busy one.
 */
export const ITEMS_PER_TURN = 50;

/**
 * A request's items as batch messages (one, or as few as `maxBytes` allows), each with its JSON:
 * the items' texts spliced in (their payloads serialised once), and the value that names its
 * subject (its tenant's lane). Yields to the event loop every ITEMS_PER_TURN items: a 1,000-item
 * request is otherwise one turn of tens of ms that every other tenant's request waits behind
 * (issue 41).
 */
export async function batchMessages(
  inputs: StoreInput[],
  receivedAt: string,
  maxBytes: number,
  yieldTurn: () => Promise<void> = nextTurn,
): Promise<Array<{ value: IngestBatchMessage; data: Uint8Array; inputs: StoreInput[] }>> {
  const s = JSON.stringify;
  const items: Array<{ input: StoreInput; messageId: string; head: string; payload: string; bytes: number }> = [];
  const due = sliceClock(ITEMS_PER_TURN);
  for (const input of inputs) {
    if (due()) await yieldTurn();
    const messageId = messageIdFor(input);
    const { head, payload } = itemPieces(input, messageId);
    items.push({ input, messageId, head, payload, bytes: Buffer.byteLength(head) + Buffer.byteLength(payload) + 1 });
  }
  return splitItems(items, (i) => i.bytes, maxBytes).map((run) => {
    const messageId = batchMessageIdFor(run.map((i) => i.messageId));
    const tenantId = run[0].input.tenantId;
    const head = `{"kind":"batch","messageId":${s(messageId)},"tenantId":${s(tenantId)},"receivedAt":${s(receivedAt)},"items":[`;
    return {
      value: { kind: "batch", messageId, tenantId, receivedAt, items: [] },
      data: batchBytes(head, run),
      inputs: run.map((i) => i.input),
    };
  });
}

/**
 * The UTF-8 of `head`, the items' JSON joined by commas, and `]}`: written piece by piece into one
 * buffer of the exact size (each item's byte count is known), instead of joining the items' texts
 * into the message's text and encoding that (two copies of a message of up to 4 MB).
 */
function batchBytes(head: string, run: Array<{ head: string; payload: string; bytes: number }>): Uint8Array {
  const headBytes = Buffer.byteLength(head);
  let size = headBytes + 2 + run.length - 1; // "]}", and a comma between two items
  for (const item of run) size += item.bytes;
  const out = new Uint8Array(size);
  let at = utf8.encodeInto(head, out).written;
  for (let i = 0; i < run.length; i++) {
    if (i > 0) out[at++] = 44; // ,
    at += utf8.encodeInto(run[i].head, out.subarray(at)).written;
    at += utf8.encodeInto(run[i].payload, out.subarray(at)).written;
    out[at++] = 125; // }
  }
  out[at++] = 93; // ]
  out[at++] = 125; // }
  if (at !== size) throw new Error(`batch message is ${at} bytes, expected ${size}`);
  return out;
}

/** Publishes to INGEST and resolves only after the PubAck; every failure is a 503 (or 413). */
export function createPublisher(deps: PublisherDeps) {
  return createPublishing(deps).store;
}

/**
 * The publisher's two ways in: `store`, one item in one message (the single doors, OTLP), and
 * `storeAll`, the items of one request in one message (the batch door: issue 36), split only
 * where the message would pass the stream's maximum payload (`maxMessageBytes`).
 */
export function createPublishing(deps: PublisherDeps) {
  let inFlight = 0;
  const maxMessageBytes = deps.maxMessageBytes ?? deps.maxBodyBytes + ENVELOPE_BYTES;
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
    const sent = messages.map(async (m): Promise<StoredBatch> => {
      const ack = await publishOne(m.value, m.value.messageId, m.data, inputs[0].door);
      return { messageId: m.value.messageId, duplicate: ack.duplicate, inputs: m.inputs };
    });
    const results = await Promise.allSettled(sent);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return results.map((r) => (r as PromiseFulfilledResult<StoredBatch>).value);
  }

  return { store, storeAll };
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

/** Throws when the server's max_payload cannot carry the largest body we accept. */
export function assertPayloadFits(nc: NatsConnection, maxBodyBytes: number): void {
  const max = nc.info?.max_payload ?? 0;
  if (max < maxBodyBytes + ENVELOPE_BYTES) {
    throw new Error(
      `nats-server max_payload is ${max} bytes but INGEST_MAX_BODY_BYTES=${maxBodyBytes} needs at least ${maxBodyBytes + ENVELOPE_BYTES}; raise max_payload in the server config`,
    );
  }
}
