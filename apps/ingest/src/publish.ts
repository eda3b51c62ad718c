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
  IngestScoreMessage,
  OtlpTracePayload,
  TracePayload,
} from "@cellar/shared/payloads";
import { tooLarge } from "./body.ts";

const nextTurn: (fn: () => void) => void =
  typeof setImmediate === "function" ? (fn) => setImmediate(fn) : (fn) => setTimeout(fn, 0);

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
}

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
  return h.update(input.idSource ?? canonicalJson(input.payload)).digest("hex");
}

/** Publishes to INGEST and resolves only after the PubAck; every failure is a 503 (or 413). */
export function createPublisher(deps: PublisherDeps) {
  let inFlight = 0;
  const unavailable = () =>
    serviceUnavailable("storage temporarily unavailable, retry later", STORAGE_RETRY_AFTER_SECONDS);

  // Publishes issued in one event-loop turn leave in one socket write: nats.js flushes its outbound
  // buffer on a microtask, and each HTTP request is its own task, so without this every message
  // would cost a write (the largest CPU item in profiles of bench/ingest.ts).
  // setImmediate, not setTimeout(0): Bun clamps the latter to ~1 ms and spends ~90 us of CPU on it.
  let batch: Array<() => void> = [];
  const flush = () => {
    const starting = batch;
    batch = [];
    for (const fn of starting) fn();
  };
  const send = (start: () => void) => {
    if (batch.push(start) === 1) nextTurn(flush);
  };

  return async function store(input: StoreInput): Promise<{ messageId: string; duplicate: boolean }> {
    if (deps.connected && !deps.connected()) throw unavailable();
    if (inFlight >= deps.maxInFlight) throw unavailable();
    const messageId = messageIdFor(input);
    const message = ingestMessage(input, messageId, deps.now().toISOString());
    inFlight++;
    try {
      const ack = await new Promise<PubAck>((resolve, reject) =>
        send(() => {
          // A synchronous throw must fail this request only, not the rest of the batch.
          try {
            publish(deps.js, deps.topology, ingestStream, message, {
              msgID: messageId,
              timeout: deps.publishTimeoutMs,
              text: input.payloadText === undefined ? undefined : messageText(message, input.payloadText),
              // Every door checked the body with shared/ingest-rules.ts: the processor trusts that.
              headers: ingestCheckedHeaders(input.door),
            }).then(resolve, reject);
          } catch (err) {
            reject(err);
          }
        }),
      );
      return { messageId, duplicate: ack.duplicate };
    } catch (err) {
      // The client refuses messages over the server's max_payload (the only invalid argument a
      // publish of a string can have); main.ts checks max_payload covers the body limit.
      if (err instanceof errors.InvalidArgumentError) throw tooLarge(deps.maxBodyBytes);
      deps.logger.warn("publish to INGEST failed", { err: err as Error, messageId });
      throw unavailable();
    } finally {
      inFlight--;
    }
  };
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
