import type postgres from "postgres";
import { maturationKey, type MaturedMessage } from "@cellar/shared/payloads";
import type { Loaded } from "./attempt.ts";
import type { SubscriptionTarget } from "@cellar/shared/webhooks/delivery-state";
import { deliveryBodyParts, newDeliveryIds } from "@cellar/shared/webhooks/deliveries";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";

export interface FanoutDeps {
  sql: postgres.Sql;
  now: () => Date;
  /** The inserted rows come claimed for this long (their first attempt: PathResources.attemptLeaseMs). */
  attemptLeaseMs: number;
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
  /** Set for fresh rows: their insert claimed the first attempt until then (delivery-state.ts). */
  leasedUntil?: Date;
}

/**
 * One delivery per matching enabled subscription of an entitled tenant, for a whole batch of
 * MATURED events in two queries: the subscriptions of the batch's services, then one insert of
 * every row. Each event's body is serialized once, around its deliveries' ids (deliveryBodyParts),
 * and the ids are drawn together. Returns the deliveries still pending for these events, each
 * marked `fresh` when this call inserted it, and claimed by the insert for its first attempt
 * (`leasedUntil`); the caller decides whether it owns the others (the ownership rule: ownedBy in
 * matured.ts), whose attempts claim for themselves. Rows are unique per (subscription, event): a re-selected trace is a
 * duplicate, not a second delivery.
 *
 * Not one statement: matching, inserting and returning in one statement (a8f1b37) cost more
 * Postgres time per delivery than the second round trip saves (docs/performance-journal.md,
 * "Webhooks, figure 3"): its rows carry the subscription's columns once per delivery instead of
 * once per subscription.
 */
export async function fanOut(deps: FanoutDeps, events: MaturedMessage[]): Promise<PendingDelivery[]> {
  if (events.length === 0) return [];
  type Sub = SubscriptionTarget & { tenant_id: string; trace_service_id: string; event_types: string[] };
  const subs = await deps.sql<Sub[]>`
    select s.id as subscription_id, s.tenant_id, s.trace_service_id, s.event_types, s.url, s.enabled, s.secret_encrypted,
      s.previous_secret_encrypted, s.previous_secret_expires_at
    from webhook_subscriptions s join tenants t on t.id = s.tenant_id
    where s.trace_service_id = any(${[...new Set(events.map((m) => m.traceServiceId))]}::uuid[]) and s.enabled and t.webhooks_enabled`;
  if (subs.length === 0) return [];
  const timestamp = deps.now();
  const matches = events.map((m) =>
    subs.filter(
      (s) => s.tenant_id === m.tenantId && s.trace_service_id === m.traceServiceId && s.event_types.includes(m.type),
    ),
  );
  const ids = newDeliveryIds(matches.reduce((n, subsOf) => n + subsOf.length, 0));
  const rows: Array<deliveryState.NewDelivery & { sub: Sub }> = [];
  for (const [i, m] of events.entries()) {
    if (matches[i].length === 0) continue;
    const data = {
      tenant_id: m.tenantId,
      trace_service_id: m.traceServiceId,
      service_name: m.serviceName,
      maturation_count: m.maturationCount,
      occurred_at: m.occurredAt,
      ...(m.type === "session.matured" ? { session_id: m.sessionId } : { trace_id: m.traceId }),
    };
    const { head, tail } = deliveryBodyParts({ type: m.type, timestamp, data });
    for (const sub of matches[i]) {
      const id = ids[rows.length];
      rows.push({
        id,
        tenant_id: m.tenantId,
        subscription_id: sub.subscription_id,
        event_type: m.type,
        event_key: eventKey(m),
        body: head + id + tail,
        enqueued_at: timestamp,
        sub,
      });
    }
  }
  if (rows.length === 0) return [];
  const leasedUntil = new Date(timestamp.getTime() + deps.attemptLeaseMs);
  const inserted = await deliveryState.insert(deps.sql, rows, leasedUntil);
  if (inserted.length === rows.length) {
    return rows.map(({ sub, ...r }) => ({
      id: r.id,
      eventKey: r.event_key,
      tenantId: r.tenant_id,
      attempts: 0,
      fresh: true,
      leasedUntil,
      row: {
        id: r.id,
        tenant_id: r.tenant_id,
        body: r.body,
        status: "pending",
        attempts: 0,
        next_attempt_at: null,
        created_at: timestamp,
        subscription_id: sub.subscription_id,
        url: sub.url,
        enabled: sub.enabled,
        secret_encrypted: sub.secret_encrypted,
        previous_secret_encrypted: sub.previous_secret_encrypted,
        previous_secret_expires_at: sub.previous_secret_expires_at,
      },
    }));
  }
  // Some pair had its row already (a replayed or re-selected event): what is pending for these
  // events, whoever inserted it.
  const existing = await deps.sql<{ id: string; event_key: string; tenant_id: string; attempts: number }[]>`
    select id, event_key, tenant_id, attempts from webhook_deliveries
    where event_key = any(${[...new Set(rows.map((r) => r.event_key))]}::text[])
      and subscription_id = any(${[...new Set(rows.map((r) => r.subscription_id))]}::uuid[])
      and status = 'pending'`;
  const mine = new Set(inserted);
  return existing.map((r) => ({
    id: r.id,
    eventKey: r.event_key,
    tenantId: r.tenant_id,
    attempts: r.attempts,
    fresh: mine.has(r.id),
    leasedUntil: mine.has(r.id) ? leasedUntil : undefined,
  }));
}
