import { createHash } from "node:crypto";
import { canonicalJson } from "@cellar/shared/crypto";
import type {
  EventPayload,
  IngestBatchMessage,
  IngestMessage,
  IngestScoreMessage,
  OtlpTracePayload,
  TracePayload,
} from "@cellar/shared/payloads";
import { nextTurn, sliceClock } from "@cellar/shared/steps";

/**
 * A door's input as INGEST messages: the message ids, and a request's items written into batch
 * messages. Pure (no connection, no clock): the publisher (publish.ts) runs it on the event loop,
 * and the offload worker (offload/) runs it for a large request on a thread of its own.
 */

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

/**
 * A batch message built away from the publisher (offload/): its id, bytes and subject's tenant,
 * and how many items of each service it holds (what the ledger counts once it is stored).
 */
export interface BuiltMessage {
  messageId: string;
  tenantId: string;
  receivedAt: string;
  data: Uint8Array;
  /** Items per service name. */
  services: Record<string, number>;
}

/** One of batchMessages' messages as a BuiltMessage (structured-cloneable: it crosses threads). */
export function builtMessage(m: { value: IngestBatchMessage; data: Uint8Array; inputs: StoreInput[] }): BuiltMessage {
  const services: Record<string, number> = {};
  for (const input of m.inputs) services[input.serviceName] = (services[input.serviceName] ?? 0) + 1;
  return {
    messageId: m.value.messageId,
    tenantId: m.value.tenantId,
    receivedAt: m.value.receivedAt,
    data: m.data,
    services,
  };
}
