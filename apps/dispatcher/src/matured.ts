import type { JsMsg } from "@nats-io/jetstream";
import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import { isMonitorEvent, maturationsOf, type MaturedMessage, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { createBatcher } from "./batcher.ts";
import { publishDeliveryJobs } from "@cellar/shared/webhooks/deliveries";
import { attempt, type DeliveryPath, type PathResources } from "./attempt.ts";
import { eventKey, fanOut, type PendingDelivery } from "./fanout.ts";
import { fanOutMonitorEvent } from "./monitor-fanout.ts";
import type { DispatchResources } from "./resources.ts";

/** Fan-out of one MATURED event; many events share two queries (fanout.ts). */
export type FanOutOne = (event: MaturedMessage) => Promise<PendingDelivery[]>;

/** Batches the fan-out of concurrent MATURED messages: up to 200 events, a lone one waits 5 ms. */
export function batchedFanOut({
  sql,
  now,
  attemptLeaseMs,
}: Pick<DispatchResources, "sql" | "now" | "attemptLeaseMs">): FanOutOne {
  return createBatcher(
    async (events: MaturedMessage[]) => {
      const byEvent = new Map<string, PendingDelivery[]>();
      for (const d of await fanOut({ sql, now, attemptLeaseMs }, events))
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
 * THE OWNERSHIP RULE: which MATURED message attempts which delivery first (the one place it is
 * decided; fanout.ts and monitor-fanout.ts only mark the rows a message inserted `fresh`).
 *
 * Why two consumers attempt deliveries: a first attempt runs in the MATURED consumer right after
 * the fan-out, through the same path as every retry (attempt.ts), because most
 * receivers answer 2xx and then a delivery costs one row insert and one attempt record, without
 * a trip through DELIVERIES. Retries live in DELIVERIES, whose nak(delay) is the retry curve.
 * A delivery to be tried again (a failed first attempt, a crowded destination, a replay of one
 * already retried) is handed on there after the attempt it has had, under a message id of that
 * attempt, and MATURED is acked only once each of its deliveries is attempted or handed on.
 *
 * Who owns a pending row: a fresh message for an event that has rows already (a re-selected
 * trace) owns only the rows it inserted; the others belong to the message that inserted them,
 * which is done, still working (heartbeats keep it), or unacked and coming back. That original
 * back again owns every pending row of its event: redelivered by the stream (deliveryCount > 1),
 * or run again by the consume runtime after a transient failure (a DELIVERIES publish timing out
 * while a NATS node is lost, Postgres away: consume/each.ts), when its deliveryCount is still 1
 * and its rows are no longer fresh (issue 41: without this, its deliveries not yet attempted were
 * never attempted). The jobs a take-over re-publishes carry the ids the lost ones would have had,
 * so the stream drops true duplicates. Owning a delivery is the right to try it, not to send it:
 * every attempt first holds the delivery's attempt claim (attempt.ts, delivery-state.ts), which
 * the inserting message took with the insert. An original back again while the first run's
 * attempt is still in flight (its ack deadline passed, a copy in another batch redelivered) is
 * refused the claim and hands the delivery on to come back when the claim ends; so is one back
 * after a crash, whose dead claim expires. Call once per run of the handler, before the fan-out.
 */
export function ownedBy(msg: JsMsg): (d: PendingDelivery) => boolean {
  const original = handledOnce.has(msg) || msg.info.deliveryCount > 1;
  handledOnce.add(msg);
  return (d) => d.fresh || original;
}

/** Messages this process has handled once (ownedBy). */
const handledOnce = new WeakSet<object>();

/**
 * Hands the delivery to DELIVERIES after attempt `afterAttempt` (MATURED's mapping of a nak):
 * the message id is the delivery and that attempt, so a replay's second hand-on is dropped.
 */
export function handOn(r: Pick<PathResources, "js" | "topology">, deliveryId: string, tenantId: string, n: number) {
  return publishDeliveryJobs(r.js, r.topology, [{ job: { deliveryId, tenantId }, msgID: `${deliveryId}:a${n}` }]);
}

/** A first attempt through the delivery path; what is to be tried again is handed on to DELIVERIES. */
export async function firstAttempt(path: DeliveryPath, d: PendingDelivery): Promise<void> {
  if (d.attempts > 0) return handOn(path.resources, d.id, d.tenantId, d.attempts); // a replay after a crash mid-retry
  const verdict = await attempt(path, {
    deliveryId: d.id,
    row: d.row,
    leasedUntil: d.leasedUntil,
    manual: false,
    deliveryCount: 1,
  });
  if (verdict.action === "nak") await handOn(path.resources, d.id, d.tenantId, verdict.afterAttempt ?? 0);
}

/**
 * The MATURED consumer: fans the event (or each maturation of a batch) out to its deliveries and
 * runs the first attempts of those it owns (ownedBy).
 */
export async function handleMatured(
  path: DeliveryPath,
  fanOutOne: FanOutOne,
  { value: event, msg }: Delivery<MaturedStreamMessage>,
): Promise<Outcome> {
  const owned = ownedBy(msg);
  // Fan-out is idempotent: a redelivery cannot make a second delivery.
  // A monitor's state change (docs/monitors.md) fans out to the subscriptions that opted in; a
  // batch of trace maturations, each of them (the batcher puts them in one fan-out query).
  const { sql, now, attemptLeaseMs } = path.resources;
  const fanned = isMonitorEvent(event)
    ? await fanOutMonitorEvent({ sql, now, attemptLeaseMs }, event)
    : (await Promise.all(maturationsOf(event).map(fanOutOne))).flat();
  await Promise.all(fanned.filter(owned).map((d) => firstAttempt(path, d)));
}
