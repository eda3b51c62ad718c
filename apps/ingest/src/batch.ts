import { badRequest, HttpError } from "@cellar/shared/errors";
import { jsonResponse } from "@cellar/shared/http";
import { inspectJson } from "@cellar/shared/json-limits";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { EventPayload, TracePayload } from "@cellar/shared/payloads";
import type { TSchema } from "@sinclair/typebox";
import { parseBatchJson } from "./batch-body.ts";
import {
  assertNoDuplicateKeys,
  bodyText,
  inflateBody,
  inflatedSizeHint,
  readWireBody,
  requireJsonContentType,
  type WireBody,
} from "./body.ts";
import { ledgerReportKeys } from "./ledger.ts";
import { nextTurn, sliceClock } from "@cellar/shared/steps";
import { answerErrors, type IngestPipeline, ITEMS_PER_TURN, serviceNameFor } from "./pipeline.ts";
import { batchMessages, type BuiltMessage, builtMessage, type StoreInput } from "./batch-message.ts";
import { SCORE_BATCH_ITEM } from "./scores.ts";
import { validateEvent, validateKeepingText, validateTrace } from "./validate.ts";

/**
 * POST /raw/batch (docs/sdks.md, docs/ingestion.md "The batch door"): many traces and events in
 * one request, each validated by exactly the function its single door uses, answered on its
 * own, and every accepted one stored in JetStream before the 200: all of them in one INGEST
 * message (issue 36), each item with the id its single door gives the same body.
 */

/** One kind of item: how the single door validates its body, and the message kind it becomes. */
export interface BatchItemType {
  kind: StoreInput["kind"];
  /** The body's schema, for the OpenAPI document (openapi.ts). */
  schema: TSchema;
  /** The single door's validator: the payload (normalised in place), or throws a 400 naming the field. */
  validate(body: unknown): { service_name?: string };
  /** What to store for a valid payload, when it needs the credential (scores: source, key). */
  toStore?(key: ResolvedKey, payload: unknown, serviceName: string, idSource: string): StoreInput;
}

/** The item types by their `type`; a new door adds one entry here (e.g. `score`). */
export const BATCH_ITEM_TYPES: Record<string, BatchItemType> = {
  trace: { kind: "trace", schema: TracePayload, validate: validateTrace },
  event: { kind: "event", schema: EventPayload, validate: validateEvent },
  score: SCORE_BATCH_ITEM, // docs/scores.md
};

export const MAX_BATCH_ITEMS = 1_000;

export type BatchItemAnswer = { status: "accepted" } | { status: "refused"; error: string };

interface CheckedItem {
  type: BatchItemType;
  body: unknown;
  /** Set when the body's storability walk failed (depth, keys, NUL ...): the item is refused. */
  problem: string | null;
}

/**
 * The envelope's shape, or a 400 naming `items` or `items[i]`: the whole batch is refused. Yields
 * to the event loop every ITEMS_PER_TURN items (each item's body is walked).
 */
export async function readEnvelope(
  envelope: Record<string, unknown>,
  yieldTurn: () => Promise<void> = nextTurn,
): Promise<{ items: CheckedItem[]; keys: number | null }> {
  const items = envelope.items;
  if (!Array.isArray(items))
    throw badRequest(`invalid items: required (an array of 1 to ${MAX_BATCH_ITEMS} {"type", "body"} objects)`);
  if (items.length === 0) throw badRequest("invalid items: must hold at least 1 item");
  if (items.length > MAX_BATCH_ITEMS)
    throw badRequest(`invalid items: at most ${MAX_BATCH_ITEMS} items per batch (got ${items.length})`);
  let keys: number | null = Object.keys(envelope).length;
  const checked: CheckedItem[] = [];
  const due = sliceClock(ITEMS_PER_TURN);
  for (let i = 0; i < items.length; i++) {
    if (due()) await yieldTurn();
    const item = items[i] as Record<string, unknown>;
    if (item === null || typeof item !== "object" || Array.isArray(item))
      throw badRequest(`invalid items[${i}]: must be an object {"type", "body"}`);
    const type = typeof item.type === "string" && Object.hasOwn(BATCH_ITEM_TYPES, item.type) ? item.type : null;
    if (type === null)
      throw badRequest(
        `invalid items[${i}].type: must be one of ${Object.keys(BATCH_ITEM_TYPES)
          .map((t) => JSON.stringify(t))
          .join(", ")}`,
      );
    const inspection = inspectJson(item.body, "/body");
    if (keys !== null) keys = inspection.ok ? keys + Object.keys(item).length + inspection.keys : null;
    checked.push({ type: BATCH_ITEM_TYPES[type], body: item.body, problem: inspection.ok ? null : inspection.error });
  }
  return { items: checked, keys };
}

/** The single door's error for this body, its field names under `body.`. */
const asItemError = (message: string) => message.replace(/^invalid /, "invalid body.");

export async function postBatch(
  pipeline: IngestPipeline,
  request: Request,
  requestId: string,
  client: string | undefined,
): Promise<Response> {
  return answerErrors(requestId, async (headers) => {
    const { key, cors } = await pipeline.authenticate(request, client);
    const yieldTurn = () => pipeline.turn(key.tenantId);
    Object.assign(headers, cors);
    requireJsonContentType(request);
    // Refused here, before the body is read, when the bucket cannot hold this credential's usual
    // batch; the real count settles it once parsed (docs/ingestion.md, "Rate limits").
    const reservation = pipeline.reserveRateTokens(key.id, "batch");
    Object.assign(headers, reservation.headers);
    let result: BatchWork;
    let built: BuiltMessage[] | null = null;
    try {
      // Confirmed before inflating and before parsing: refused there when another request of the
      // credential was counted larger meanwhile (a herd admitted on a small estimate parses one body).
      await reservation.confirm(); // before reading: a herd's others wait for the door's probe here
      const wire = await readWireBody(request, pipeline.maxBodyBytes);
      if (wire.gzip && wire.bytes.byteLength > 0) await reservation.confirm(); // before inflating
      const steps: BatchSteps = {
        // The SDK's ledger report (docs/sdks.md): counted whatever the batch's answer; never refused.
        parsed: (ledger) => pipeline.sdkReport?.(ledger),
        // Charged per item as soon as they are counted, before each is checked.
        counted: (n) => Object.assign(headers, reservation.settle(n, "items")),
      };
      // A large body (a gzip one by the size its trailer states) is inflated and worked on an
      // offload thread, in this tenant's turn for one (offload/); its steps replayed here in their
      // order, so the answer is the loop's own.
      const offloaded = (await pipeline.offloaded?.(key.tenantId, "batch", inflatedSizeHint(wire), {
        key,
        wire,
        maxBodyBytes: pipeline.maxBodyBytes,
      })) as BatchJobResult | undefined;
      if (offloaded) {
        if (offloaded.parsed) steps.parsed(offloaded.parsed.ledger);
        if (offloaded.count !== null) steps.counted(offloaded.count);
        if (offloaded.error) throw new HttpError(offloaded.error.status, offloaded.error.message);
        result = offloaded.work!;
        built = offloaded.messages;
      } else {
        const text = bodyText(await inflateBody(wire, pipeline.maxBodyBytes));
        await reservation.confirm();
        // In slices, ITEMS_PER_TURN items a turn, each in this tenant's turn (pipeline.ts): other
        // tenants' requests are served between them.
        await yieldTurn();
        result = await batchWork(key, text, yieldTurn, steps);
      }
    } finally {
      reservation.settleUncounted(); // a body that could not be counted (no-op once settled)
    }
    pipeline.refuseItems?.(result.refused);
    // One INGEST message for the request's items (issue 36; split only past the maximum payload).
    if (built) {
      if (built.length) await pipeline.storeBuilt(built);
    } else if (result.accepted.length) await pipeline.storeAll(result.accepted);
    const status = result.refused === 0 ? "success" : "partial";
    return jsonResponse(200, { status, items: result.answers }, headers);
  });
}

/** What a batch body's work gives: an answer per item, what to store, how many were refused. */
export interface BatchWork {
  answers: BatchItemAnswer[];
  accepted: StoreInput[];
  refused: number;
}

/** The points of a batch's work a door acts on, in this order: the body parsed (its ledger report), its items counted. */
export interface BatchSteps {
  parsed(ledger: unknown): void;
  counted(n: number): void;
}

/**
 * A batch body's work once read, the same on the event loop (postBatch, in the tenant's turns)
 * and on an offload thread (offload/tasks.ts): parse, count, envelope, duplicate keys, each
 * item's checks. Throws the 400 that refuses the whole batch.
 */
export async function batchWork(
  key: ResolvedKey,
  text: string,
  yieldTurn: () => Promise<void>,
  steps: BatchSteps,
): Promise<BatchWork> {
  const { object, keyTokens } = await parseBatchJson(text, yieldTurn);
  steps.parsed(object.ledger);
  if (Array.isArray(object.items)) steps.counted(object.items.length);
  const envelope = await readEnvelope(object, yieldTurn);
  const reportKeys = object.ledger === undefined ? 0 : ledgerReportKeys(object.ledger);
  const parsedKeys = envelope.keys === null || reportKeys === null ? null : envelope.keys + reportKeys;
  assertNoDuplicateKeys(text, parsedKeys, keyTokens);
  const { answers, accepted } = await checkItems(key, envelope.items, yieldTurn);
  return { answers, accepted, refused: envelope.items.length - accepted.length };
}

/**
 * Each item through its single door's checks: an answer per item and what to store. Yields to the
 * event loop every ITEMS_PER_TURN items, so other requests are not held behind a 1,000-item batch.
 */
export async function checkItems(
  key: ResolvedKey,
  items: CheckedItem[],
  yieldTurn: () => Promise<void> = nextTurn,
): Promise<{ answers: BatchItemAnswer[]; accepted: StoreInput[] }> {
  const answers: BatchItemAnswer[] = [];
  const accepted: StoreInput[] = [];
  const due = sliceClock(ITEMS_PER_TURN);
  for (const item of items) {
    if (due()) await yieldTurn();
    if (item.problem) {
      answers.push({ status: "refused", error: item.problem });
      continue;
    }
    try {
      // Before validation rewrites timestamps: the single door hashes its body the same way.
      const idSource = JSON.stringify(item.body);
      const { payload, payloadText } = validateKeepingText(item.type.validate, item.body, idSource);
      const serviceName = serviceNameFor(key, payload.service_name);
      accepted.push(
        item.type.toStore?.(key, payload, serviceName, idSource) ?? {
          kind: item.type.kind,
          tenantId: key.tenantId,
          serviceName,
          payload: payload as any,
          idSource,
          payloadText,
        },
      );
      answers.push({ status: "accepted" });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      answers.push({ status: "refused", error: asItemError(err.message) });
    }
  }
  return { answers, accepted };
}

/** A large /raw/batch body, admitted and read (not yet inflated): what its door knows of it. */
export interface BatchJob {
  key: ResolvedKey;
  wire: WireBody;
  /** INGEST_MAX_BODY_BYTES: the bound a gzip body is inflated under. */
  maxBodyBytes: number;
  receivedAt: string;
  maxMessageBytes: number;
}

/**
 * The batch's work as steps for the door to replay in their order (batch.ts postBatch): whether
 * the body parsed (and its ledger report), the items counted, the 400 that refused the whole batch
 * (after those), else the answers and the messages of the accepted items.
 */
export interface BatchJobResult {
  parsed: { ledger: unknown } | null;
  count: number | null;
  error: { status: number; message: string } | null;
  /** The answers and the refused count; `accepted` is left empty (the messages carry it). */
  work: BatchWork | null;
  messages: BuiltMessage[];
}

/**
 * The offload worker's task (offload/tasks.ts): parses, counts, checks and writes a batch's
 * messages at once, as postBatch does in its tenant's turns.
 */
export async function buildBatch(job: BatchJob): Promise<BatchJobResult> {
  let parsed: BatchJobResult["parsed"] = null;
  let count: number | null = null;
  let work: BatchWork;
  try {
    // Inflated and decoded here, as the door would (413 past the bound, 400 not gzip or UTF-8).
    const text = bodyText(await inflateBody(job.wire, job.maxBodyBytes));
    work = await batchWork(job.key, text, async () => {}, {
      parsed: (ledger) => {
        parsed = { ledger };
      },
      counted: (n) => {
        count = n;
      },
    });
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return { parsed, count, error: { status: err.status, message: err.message }, work: null, messages: [] };
  }
  const built = await batchMessages(work.accepted, job.receivedAt, job.maxMessageBytes, async () => {});
  const messages = built.map(builtMessage);
  return { parsed, count, error: null, work: { answers: work.answers, accepted: [], refused: work.refused }, messages };
}
