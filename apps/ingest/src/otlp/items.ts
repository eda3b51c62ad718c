import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { ingestMessageProblem } from "@cellar/shared/ingest-rules";
import { decodeLogsInSteps, decodeTracesInSteps, OtlpDecodeError, type OtlpEncoding } from "@cellar/shared/otlp/decode";
import { type MapResult, mapLogsInSteps, mapSpansInSteps } from "@cellar/shared/otlp/map";
import { IDENTIFIER_PATTERN, LIMITS } from "@cellar/shared/payloads";
import { runInTurns, sliceClock } from "@cellar/shared/steps";
import { HttpError } from "@cellar/shared/errors";
import { batchMessages, type BuiltMessage, builtMessage, ITEMS_PER_TURN, type StoreInput } from "../batch-message.ts";
import { inflateBody } from "../body.ts";

/**
 * An OTLP request's items as messages to store: decode, count, map, and the processor's checks.
 * No I/O and no clock of the host: the door runs it in its tenant's turns (handle.ts), and the
 * offload worker runs it at once on a thread of its own (offload/).
 */

export type OtlpSignal = "traces" | "logs";

/** What of the credential the items depend on (a plain object: it crosses to the offload worker). */
export type OtlpKey = Pick<ResolvedKey, "tenantId" | "kind" | "serviceName">;

export interface OtlpItems {
  /** Spans or log records the request carried (what the rate limit charges). */
  count: number;
  rejected: number;
  /** The first five reasons an item was refused. */
  reasons: string[];
  inputs: StoreInput[];
}

const IDENT = new RegExp(IDENTIFIER_PATTERN);

/** The service an item is stored under: a DSN names its own; otherwise the resource's service.name. */
export function otlpServiceFor(key: Pick<ResolvedKey, "kind" | "serviceName">, given: string | null): string | null {
  // A DSN names its service; the SDK's resource (often "unknown_service:node") cannot override it.
  if (key.kind === "dsn-server" || key.kind === "dsn-client") return key.serviceName!;
  if (!given || given.length > LIMITS.serviceName || !IDENT.test(given)) return null;
  return given;
}

/**
 * Decodes (throws OtlpDecodeError), calls `counted` with the number of spans or records before
 * anything else is done with them (the door settles its rate limit there, and may throw), maps,
 * and checks each item: ITEMS_PER_TURN at a time, `yieldTurn` between slices.
 */
export async function otlpItems(
  key: OtlpKey,
  signal: OtlpSignal,
  bytes: Uint8Array,
  encoding: OtlpEncoding,
  yieldTurn: () => Promise<void>,
  counted: (count: number) => void = () => {},
): Promise<OtlpItems> {
  let mapped: MapResult<Record<string, unknown>>;
  let count: number;
  if (signal === "traces") {
    const spans = await runInTurns(decodeTracesInSteps(bytes, encoding), ITEMS_PER_TURN, yieldTurn);
    count = spans.length;
    counted(count);
    mapped = (await runInTurns(mapSpansInSteps(spans), ITEMS_PER_TURN, yieldTurn)) as MapResult<any>;
  } else {
    const records = await runInTurns(decodeLogsInSteps(bytes, encoding), ITEMS_PER_TURN, yieldTurn);
    count = records.length;
    counted(count);
    mapped = (await runInTurns(mapLogsInSteps(records), ITEMS_PER_TURN, yieldTurn)) as MapResult<any>;
  }
  const inputs = await storable(key, mapped, yieldTurn);
  return { count, rejected: mapped.rejected, reasons: mapped.reasons, inputs };
}

/** The mapped items that pass the processor's rules, as messages to store; the rest counted as rejected. */
async function storable(
  key: OtlpKey,
  mapped: MapResult<Record<string, unknown>>,
  yieldTurn: () => Promise<void>,
): Promise<StoreInput[]> {
  const inputs: StoreInput[] = [];
  const due = sliceClock(ITEMS_PER_TURN);
  for (const item of mapped.accepted) {
    // Other requests run between chunks: a 500-span request is not one long turn (pipeline.ts).
    if (due()) await yieldTurn();
    const serviceName = otlpServiceFor(key, item.serviceName);
    const isTrace = "request" in item.payload;
    // Exactly the check the processor decodes INGEST messages with (shared/ingest-rules.ts):
    // what is answered as stored can always be stored. It normalises timestamps in place.
    const problem = !serviceName
      ? "resource attribute service.name is required (a non-blank string of at most 200 characters)"
      : ingestMessageProblem({
          kind: isTrace ? "trace" : "event",
          messageId: "0",
          tenantId: key.tenantId,
          serviceName,
          receivedAt: new Date().toISOString(),
          payload: item.payload,
        });
    if (problem) {
      mapped.rejected++;
      if (mapped.reasons.length < 5) mapped.reasons.push(problem);
      continue;
    }
    // The mapping is deterministic (attribute order is the request's, the same in protobuf and
    // JSON): its JSON is the body the message id hashes, so a retry gets the same ids.
    const payloadText = JSON.stringify(item.payload);
    inputs.push({
      kind: isTrace ? "trace" : "event",
      tenantId: key.tenantId,
      serviceName: serviceName!,
      payload: item.payload as any,
      // The id hashes "otlp\n" + the payload's JSON, without that string built (publish.ts).
      idPrefix: "otlp\n",
      idSource: payloadText,
      payloadText,
    });
  }
  return inputs;
}

/** A large OTLP request, admitted and read: what its door knows of it. */
export interface OtlpJob {
  key: OtlpKey;
  signal: OtlpSignal;
  encoding: OtlpEncoding;
  bytes: Uint8Array;
  /** The messages' receivedAt, from the host's clock when the job was made. */
  receivedAt: string;
  /** The largest message to build (the publisher's: publish.ts). */
  maxMessageBytes: number;
  /** Set when `bytes` are a gzip body as sent: inflated here within this bound first (body.ts). */
  gzip?: { maxBodyBytes: number };
}

/** The request as INGEST messages, or why it cannot be decoded (the door's 400). */
export type OtlpJobResult =
  | { built: true; count: number; rejected: number; reasons: string[]; messages: BuiltMessage[] }
  | { built: false; decodeError: string }
  | { built: false; httpError: { status: number; message: string } };

/**
 * The offload worker's task (offload/tasks.ts): decodes, maps, checks and writes the request's
 * messages at once, as handle.ts does in its tenant's turns.
 */
export async function buildOtlp(job: OtlpJob): Promise<OtlpJobResult> {
  let bytes = job.bytes;
  if (job.gzip) {
    try {
      bytes = await inflateBody({ bytes, gzip: true }, job.gzip.maxBodyBytes);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return { built: false, httpError: { status: err.status, message: err.message } };
    }
  }
  try {
    const items = await otlpItems(job.key, job.signal, bytes, job.encoding, atOnce);
    const messages = (await batchMessages(items.inputs, job.receivedAt, job.maxMessageBytes, atOnce)).map(builtMessage);
    return { built: true, count: items.count, rejected: items.rejected, reasons: items.reasons, messages };
  } catch (err) {
    // Its class does not survive the thread: the message does, and the door rebuilds the error.
    if (err instanceof OtlpDecodeError) return { built: false, decodeError: err.message };
    throw err;
  }
}

const atOnce = async () => {};
