import { badRequest, HttpError } from "@cellar/shared/errors";
import { jsonResponse } from "@cellar/shared/http";
import { inspectJson } from "@cellar/shared/json-limits";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { EventPayload, TracePayload } from "@cellar/shared/payloads";
import type { TSchema } from "@sinclair/typebox";
import { parseBatchJson } from "./batch-body.ts";
import { assertNoDuplicateKeys, readBodyText, requireJsonContentType } from "./body.ts";
import { ledgerReportKeys } from "./ledger.ts";
import { nextTurn, sliceClock } from "@cellar/shared/steps";
import { answerErrors, type IngestPipeline, ITEMS_PER_TURN, serviceNameFor } from "./pipeline.ts";
import type { StoreInput } from "./publish.ts";
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
    let envelope: Awaited<ReturnType<typeof readEnvelope>>;
    try {
      // Confirmed before inflating and before parsing: refused there when another request of the
      // credential was counted larger meanwhile (a herd admitted on a small estimate parses one body).
      await reservation.confirm(); // before reading: a herd's others wait for the door's probe here
      const text = await readBodyText(request, pipeline.maxBodyBytes, reservation.confirm);
      await reservation.confirm();
      // In slices, ITEMS_PER_TURN items a turn, each in this tenant's turn (pipeline.ts): other
      // tenants' requests are served between them.
      await yieldTurn();
      const { object, keyTokens } = await parseBatchJson(text, yieldTurn);
      // The SDK's ledger report (docs/sdks.md): counted whatever the batch's answer; never refused.
      pipeline.sdkReport?.(object.ledger);
      // Charged per item as soon as they are counted, before each is checked.
      if (Array.isArray(object.items)) Object.assign(headers, reservation.settle(object.items.length, "items"));
      envelope = await readEnvelope(object, yieldTurn);
      const reportKeys = object.ledger === undefined ? 0 : ledgerReportKeys(object.ledger);
      const parsedKeys = envelope.keys === null || reportKeys === null ? null : envelope.keys + reportKeys;
      assertNoDuplicateKeys(text, parsedKeys, keyTokens);
    } finally {
      reservation.settleUncounted(); // a body that could not be counted (no-op once settled)
    }
    const count = envelope.items.length;
    const { answers, accepted } = await checkItems(key, envelope.items, yieldTurn);
    pipeline.refuseItems?.(count - accepted.length);
    // One INGEST message for the request's items (issue 36; split only past the maximum payload).
    if (accepted.length) await pipeline.storeAll(accepted);
    const status = accepted.length === count ? "success" : "partial";
    return jsonResponse(200, { status, items: answers }, headers);
  });
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
