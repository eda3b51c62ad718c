import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import { isMonitorEvent, maturationsOf, type MaturedMessage, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { createBatcher } from "./batcher.ts";
import { deliver } from "./delivery-attempts.ts";
import { eventKey, fanOut, type PendingDelivery } from "./fanout.ts";
import { fanOutMonitorEvent } from "./monitor-fanout.ts";
import type { DispatchPieces } from "./pieces.ts";

/** Fan-out of one MATURED event; many events share two queries (fanout.ts). */
export type FanOutOne = (event: MaturedMessage) => Promise<PendingDelivery[]>;

/** Batches the fan-out of concurrent MATURED messages: up to 200 events, a lone one waits 5 ms. */
export function batchedFanOut(p: DispatchPieces): FanOutOne {
  return createBatcher(
    async (events: MaturedMessage[]) => {
      const byEvent = new Map<string, PendingDelivery[]>();
      for (const d of await fanOut({ sql: p.deps.sql, now: p.now }, events))
        byEvent.set(d.eventKey, [...(byEvent.get(d.eventKey) ?? []), d]);
      // Two MATURED messages for one event (a replay) must not both attempt its deliveries.
      return events.map((e) => {
        const mine = byEvent.get(eventKey(e)) ?? [];
        byEvent.delete(eventKey(e));
        return mine;
      });
    },
    { maxSize: 200, maxWaitMs: 5 },
  );
}

/**
 * First attempts run right here, through the same delivery path as retries (delivery-attempts.ts) but
 * without a trip through DELIVERIES: most receivers answer 2xx and then a delivery costs one
 * row insert and one attempt record. A delivery that is to be tried again (a failed first
 * attempt, a crowded endpoint) is handed to DELIVERIES, whose consumer waits out
 * `next_attempt_at` and runs the retry curve. MATURED is acked only once every delivery is
 * attempted or handed on.
 */
export async function firstAttempt(p: DispatchPieces, d: PendingDelivery): Promise<void> {
  if (d.attempts > 0) return p.publishJob(d.id, d.tenantId, d.attempts); // replay after a crash mid-retry
  const verdict = await deliver(p, { deliveryId: d.id, row: d.row, manual: false, deliveryCount: 1 });
  if (verdict.action === "nak") await p.publishJob(d.id, d.tenantId, verdict.afterAttempt ?? 0);
}

/**
 * Which of an event's pending deliveries a MATURED message finishes (the one ownership rule of
 * the dispatcher). A fresh message for an event that has rows already (a re-selected trace)
 * owns only the rows it inserted: the others belong to the message that inserted them, which is
 * either done, still working (heartbeats keep it), or unacked and coming back. A redelivered
 * message (deliveryCount > 1) is that original after a crash or a nak, so it owns every pending
 * row of its event; the retry jobs it re-publishes carry the message ids the lost ones would
 * have had, so the stream drops true duplicates.
 */
export function ownedBy(deliveryCount: number): (d: PendingDelivery) => boolean {
  return (d) => d.fresh || deliveryCount > 1;
}

/**
 * Messages this process has handled once. After a transient failure (a DELIVERIES publish timing
 * out while a NATS node is lost, Postgres away) the consume runtime runs the handler again with
 * the same message (consume/each.ts), whose deliveryCount is still 1: its rows are no longer
 * fresh, so without this it owned none of them, acked, and every delivery of the batch not yet
 * attempted was never attempted (issue 41: trace.matured webhooks missing after a NATS node loss
 * under load). A re-run is the original again, so it owns what a redelivery owns.
 */
const handledOnce = new WeakSet<object>();

/**
 * The MATURED consumer: fans the event (or each maturation of a batch) out to its deliveries and
 * runs the first attempts of those it owns (ownedBy).
 */
export async function handleMatured(
  p: DispatchPieces,
  fanOutOne: FanOutOne,
  { value: event, msg }: Delivery<MaturedStreamMessage>,
): Promise<Outcome> {
  const rerun = handledOnce.has(msg);
  handledOnce.add(msg);
  // Fan-out is idempotent: a redelivery cannot make a second delivery.
  // A monitor's state change (docs/monitors.md) fans out to the subscriptions that opted in; a
  // batch of trace maturations, each of them (the batcher puts them in one fan-out query).
  const fanned = isMonitorEvent(event)
    ? await fanOutMonitorEvent({ sql: p.deps.sql, now: p.now }, event)
    : (await Promise.all(maturationsOf(event).map(fanOutOne))).flat();
  const deliveryCount = rerun ? Math.max(2, msg.info.deliveryCount) : msg.info.deliveryCount;
  await Promise.all(fanned.filter(ownedBy(deliveryCount)).map((d) => firstAttempt(p, d)));
}
