import type postgres from "postgres";
import { FOLDED_ATTEMPT_WINDOW } from "./delivery-state.ts";

/** One attempt of the delivery history, as stored (apps/platform's attemptView shapes it). */
export interface AttemptRecord {
  id: string;
  delivery_id: string;
  event_type: string;
  delivery_status: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  attempted_at: Date;
}

/**
 * The `limit` newest attempts of a subscription's deliveries, newest first (contract: GET
 * /webhooks/:id/deliveries). Attempts live in two places (migration 0035): a first attempt that
 * succeeded within FOLDED_ATTEMPT_WINDOW of its delivery's creation is in the delivery row, every
 * other one is a `webhook_attempts` row. Each place gives its `limit` newest and the two are
 * merged, in the order the attempts table alone was read before (attempted_at, then attempt).
 *
 * Folded attempts are found by creation time (index on subscription, created_at): take the
 * `limit` newest folded rows by creation, and m the earliest start among them; at least `limit`
 * folded attempts start at m or later, so every one of the `limit` newest starts at m or later
 * and, folded within the window, was created at m - window or later. Only those rows are sorted.
 */
export async function deliveryHistory(
  sql: postgres.Sql | postgres.TransactionSql,
  subscriptionId: string,
  limit: number,
): Promise<AttemptRecord[]> {
  return sql<AttemptRecord[]>`
    with kept as (
      select a.id, a.delivery_id, d.event_type, d.status as delivery_status, a.attempt, a.status_code, a.duration_ms, a.error, a.attempted_at
      from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      where a.subscription_id = ${subscriptionId}
      order by a.attempted_at desc, a.attempt desc limit ${limit}
    ), newest_folded as (
      select first_attempted_at from webhook_deliveries
      where subscription_id = ${subscriptionId} and first_attempted_at is not null
      order by created_at desc limit ${limit}
    ), folded as (
      select d.first_attempt_id as id, d.id as delivery_id, d.event_type, d.status as delivery_status, 1 as attempt,
        d.first_status_code as status_code, d.first_duration_ms as duration_ms, null::text as error, d.first_attempted_at as attempted_at
      from webhook_deliveries d
      where d.subscription_id = ${subscriptionId} and d.first_attempted_at is not null
        and d.created_at >= (select min(first_attempted_at) from newest_folded) - ${FOLDED_ATTEMPT_WINDOW}::interval
      order by d.first_attempted_at desc limit ${limit}
    )
    select * from (select * from kept union all select * from folded) h
    order by attempted_at desc, attempt desc limit ${limit}`;
}
