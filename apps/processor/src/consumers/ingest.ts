import type postgres from "postgres";
import { expandItem, isBatch } from "@cellar/shared/ingest-batch";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import type { DeadPart, Delivery, Outcome } from "@cellar/shared/nats/consume";
import { INGEST_DOOR_HEADER } from "@cellar/shared/nats/catalogue";
import { DL } from "@cellar/shared/nats/dead-letters";
import { classifyFailure, describeFailure } from "@cellar/shared/nats/failure";
import type { IngestMessage, IngestStreamMessage } from "@cellar/shared/payloads";
import { type WriteResult, writeIngestBatch } from "../ingest/writer.ts";
import { type ActivityEntity, activityLane } from "../maturation/activity.ts";
import type { ActivityCoalescer } from "../maturation/coalesce.ts";

/** Items written in one transaction at most: a batch of batch messages is written in chunks of this. */
export const ITEMS_PER_WRITE = 500;

export interface IngestHandlerOptions {
  /** The INGEST consumer's maxDeliver (the runtime's, policy overrides included). */
  maxDeliver: number;
  itemsPerWrite?: number;
  /** Called once a write's transaction committed, before its messages are acknowledged (fault tests). */
  afterWrite?: () => Promise<void> | void;
}

/** One item to write: a message of the old shape (`part` null) or an item of a batch message. */
interface Unit {
  delivery: number;
  part: number | null;
  message: IngestMessage;
  /** Set when writing it alone failed (not transient). */
  failure?: unknown;
  /** Its message was replayed from a dead letter (DL.replayOf): counted `replayed` once stored. */
  replayed: boolean;
  /** Its message carries no door (no ingest counted it accepted): counted `accepted` once stored (stored.ts). */
  unrecorded: boolean;
}

/**
 * The INGEST consumer: writes the items of a batch of decoded messages (a batch message's items,
 * or the one item of a message of the old shape), then refreshes their activity keys (after the
 * write: an expired key then means every span before it is in Postgres). Items are isolated one
 * by one, not messages: an item that cannot be stored is set aside as a dead letter of its own
 * (`deadLetterParts`), the good items around it are stored (docs/analyse-once.md, "One INGEST
 * message per request"). Throws on a transient failure (the runtime keeps the batch and retries).
 */
export function ingestHandler(
  sql: postgres.Sql,
  coalescer: ActivityCoalescer,
  ledger: LedgerCounter | undefined,
  opts: IngestHandlerOptions,
) {
  const perWrite = opts.itemsPerWrite ?? ITEMS_PER_WRITE;
  return async (items: Delivery<IngestStreamMessage>[]): Promise<Outcome[]> => {
    const units = unitsOf(items);
    const write = { ledger, afterWrite: opts.afterWrite };
    // Each write's keys as soon as it commits, not after the batch's last write: under a backlog
    // (twenty writes a batch) the first write's sessions fell due seconds late (issue 36).
    for (let i = 0; i < units.length; i += perWrite)
      await coalescer.refresh(await writeIsolating(sql, units.slice(i, i + perWrite), write));
    const byDelivery = items.map(() => [] as Unit[]);
    for (const u of units) byDelivery[u.delivery].push(u);
    return items.map((d, i) => settleDelivery(d, byDelivery[i], opts.maxDeliver));
  };
}

/** The items of each delivery, in order: a batch's (less those its codec rejected), or the message itself. */
function unitsOf(items: Delivery<IngestStreamMessage>[]): Unit[] {
  return items.flatMap(({ value, msg }, delivery): Unit[] => {
    const replayed = Boolean(msg.headers?.get(DL.replayOf));
    const unrecorded = !replayed && !msg.headers?.get(INGEST_DOOR_HEADER);
    if (!isBatch(value)) return [{ delivery, part: null, message: value, replayed, unrecorded }];
    const rejected = new Set(value.rejected?.map((r) => r.index));
    return value.items.flatMap((item, part) =>
      rejected.has(part) ? [] : [{ delivery, part, message: expandItem(value, item), replayed, unrecorded }],
    );
  });
}

/**
 * The activity keys a write refreshes, each in its tenant's lane (docs/maturation.md, "Tenant
 * lanes"): its active sessions and traces, and its batch key once per lane of its items' tenants
 * (a lane whose items inserted no trace finds none: acked).
 */
function activityKeys(r: WriteResult, units: Unit[]): ActivityEntity[] {
  const laneOf = (pk: string) => activityLane(r.tenantOf.get(pk)!);
  const batchLanes = r.traceBatchMicros ? new Set(units.map((u) => activityLane(u.message.tenantId))) : [];
  return [
    ...r.activeSessionPks.map((pk) => ({ kind: "session" as const, pk, lane: laneOf(pk) })),
    ...r.activeTracePks.map((pk) => ({ kind: "trace" as const, pk, lane: laneOf(pk) })),
    ...[...batchLanes].map((lane) => ({ kind: "batch" as const, pk: r.traceBatchMicros!, lane })),
  ];
}

interface WriteSide {
  ledger: LedgerCounter | undefined;
  afterWrite?: () => Promise<void> | void;
}

/**
 * Writes the units in one transaction; when that fails (not transiently) splits them in halves
 * until the culprit is alone and marks it, so the halves that pass are committed. A transient
 * failure throws (the runtime retries the whole batch, idempotent by natural keys). The items
 * stored are counted in the ledger in the same transaction (docs/ledger.md), so a write
 * committed is counted once whatever happens to its acknowledgement. Returns the activity keys
 * to refresh.
 */
async function writeIsolating(sql: postgres.Sql, units: Unit[], side: WriteSide): Promise<ActivityEntity[]> {
  try {
    const r = await writeIngestBatch(
      sql,
      units.map((u) => u.message),
      side.ledger
        ? {
            ledger: {
              replayed: new Set(units.filter((u) => u.replayed).map((u) => u.message)),
              unrecorded: new Set(units.filter((u) => u.unrecorded).map((u) => u.message)),
            },
          }
        : {},
    );
    for (const c of r.counted) side.ledger?.counted(c.stage, c.reason, c.n);
    await side.afterWrite?.();
    return activityKeys(r, units);
  } catch (err) {
    if (classifyFailure(err) === "transient") throw err;
    if (units.length === 1) {
      units[0].failure = err;
      return [];
    }
    const mid = units.length >> 1;
    const a = await writeIsolating(sql, units.slice(0, mid), side);
    const b = await writeIsolating(sql, units.slice(mid), side);
    return [...a, ...b];
  }
}

/**
 * A delivery's outcome once its items are written: a message of the old shape that failed fails
 * as before (the runtime retries or dead-letters it); a batch's failed items are dead-lettered
 * alone (a permanent failure, an item its codec rejected, or a retry failure on the last
 * delivery), or, while deliveries remain, a retry failure brings the message back (its written
 * items are no-ops then). Stored was counted with the rows, in the write's transaction.
 */
function settleDelivery(d: Delivery<IngestStreamMessage>, units: Unit[], maxDeliver: number): Outcome {
  const failed = units.filter((u) => u.failure !== undefined);
  if (!isBatch(d.value)) {
    if (failed.length) return { fail: failed[0].failure };
  } else {
    const count = d.msg.info.deliveryCount;
    const retrying = failed.find((u) => classifyFailure(u.failure) !== "permanent");
    if (retrying && count < maxDeliver) return { fail: retrying.failure };
    const parts = deadParts(d.value, failed, count, maxDeliver);
    if (parts.length) return { deadLetterParts: parts };
  }
  return "ack";
}

/** The items of a batch to set aside: those its codec rejected and those whose write failed. */
function deadParts(
  batch: Extract<IngestStreamMessage, { kind: "batch" }>,
  failed: Unit[],
  count: number,
  maxDeliver: number,
): DeadPart[] {
  const part = (index: number, reason: string): DeadPart => {
    const item = batch.items[index];
    return { index, value: expandItem(batch, item), reason, msgId: item.messageId };
  };
  return [
    ...(batch.rejected ?? []).map((r) => part(r.index, r.error)),
    ...failed.map((u) => {
      const reason = describeFailure(u.failure);
      return part(
        u.part!,
        classifyFailure(u.failure) === "permanent" ? reason : `failed on delivery ${count} of ${maxDeliver}: ${reason}`,
      );
    }),
  ].sort((a, b) => a.index - b.index);
}
