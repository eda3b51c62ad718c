import type postgres from "postgres";
import { maturationKey, type MaturedMessage } from "@cellar/shared/payloads";
import type { Loaded } from "./attempt.ts";
import { deliveryBodyParts, newDeliveryIds } from "@cellar/shared/webhooks/deliveries";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";

export interface FanoutDeps {
  sql: postgres.Sql;
  now: () => Date;
}

/** The dedup key of an event: the same as the MATURED message id. */
export function eventKey(m: MaturedMessage): string {
  return maturationKey(m);
}

/** A delivery still to be attempted, as fan-out hands it on. */
export interface PendingDelivery {
  id: string;
  eventKey: string;
  /** Picks the DELIVERIES lane of its retry job. */
  tenantId: string;
  attempts: number;
  /** Inserted by this fan-out (false: the row existed, another message owns it). */
  fresh: boolean;
  /** Set for fresh rows: everything the first attempt needs, so it skips a load query. */
  row?: Loaded;
}

/**
 * Ids offered per event: a trace service has at most 5 subscriptions (the platform's limit,
 * taken under a row lock), so one statement nearly always suffices; an event that matched more
 * runs again with twice as many.
 */
export const IDS_PER_EVENT = 5;

/**
 * One delivery per matching enabled subscription of an entitled tenant, for a whole batch of
 * MATURED events in one statement (deliveryState.insertForSubscribers), plus one more read when
 * some (subscription, event) pair had its row already. Returns the deliveries still pending for
 * these events, each marked `fresh` when this call inserted it; the caller decides whether it
 * owns the others (ownedBy in matured.ts). Rows are unique per (subscription, event): a
 * re-selected trace is a duplicate, not a second delivery.
 */
export async function fanOut(deps: FanoutDeps, events: MaturedMessage[]): Promise<PendingDelivery[]> {
  if (events.length === 0) return [];
  const timestamp = deps.now();
  const fanEvents = events.map((m): deliveryState.FanOutEvent => {
    const data = {
      tenant_id: m.tenantId,
      trace_service_id: m.traceServiceId,
      service_name: m.serviceName,
      maturation_count: m.maturationCount,
      occurred_at: m.occurredAt,
      ...(m.type === "session.matured" ? { session_id: m.sessionId } : { trace_id: m.traceId }),
    };
    return {
      tenant_id: m.tenantId,
      trace_service_id: m.traceServiceId,
      event_type: m.type,
      event_key: eventKey(m),
      ...deliveryBodyParts({ type: m.type, timestamp, data }),
    };
  });
  let fanned: deliveryState.FannedDelivery[] = [];
  const inserted = new Set<string>();
  for (let perEvent = IDS_PER_EVENT; ; perEvent *= 2) {
    const ids = newDeliveryIds(events.length * perEvent);
    fanned = await deliveryState.insertForSubscribers(deps.sql, fanEvents, ids, perEvent, timestamp);
    for (const f of fanned) if (f.inserted && f.id) inserted.add(f.id);
    if (fanned.every((f) => f.id !== null)) break;
  }
  if (fanned.length === 0) return [];
  if (fanned.every((f) => f.inserted)) {
    return fanned.map((f) => {
      const e = fanEvents[f.event];
      const id = f.id!;
      return {
        id,
        eventKey: e.event_key,
        tenantId: e.tenant_id,
        attempts: 0,
        fresh: true,
        row: {
          id,
          tenant_id: e.tenant_id,
          body: e.head + id + e.tail,
          status: "pending",
          attempts: 0,
          next_attempt_at: null,
          created_at: timestamp,
          subscription_id: f.subscription_id,
          url: f.url,
          enabled: f.enabled,
          secret_encrypted: f.secret_encrypted,
          previous_secret_encrypted: f.previous_secret_encrypted,
          previous_secret_expires_at: f.previous_secret_expires_at,
        },
      };
    });
  }
  // Some pair had its row already (a replayed or re-selected event, or a rerun past IDS_PER_EVENT):
  // what is pending for these events, whoever inserted it.
  const existing = await deps.sql<{ id: string; event_key: string; tenant_id: string; attempts: number }[]>`
    select id, event_key, tenant_id, attempts from webhook_deliveries
    where event_key = any(${[...new Set(fanEvents.map((e) => e.event_key))]}::text[])
      and subscription_id = any(${[...new Set(fanned.map((f) => f.subscription_id))]}::uuid[])
      and status = 'pending'`;
  return existing.map((r) => ({
    id: r.id,
    eventKey: r.event_key,
    tenantId: r.tenant_id,
    attempts: r.attempts,
    fresh: inserted.has(r.id),
  }));
}
