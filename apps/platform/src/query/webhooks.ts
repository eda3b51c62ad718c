import type postgres from "postgres";
import { forbidden, notFound } from "@cellar/shared/errors";
import { deliveryHistory } from "@cellar/shared/webhooks/delivery-history";
import { hasRole, type Principal } from "../auth/principal.ts";
import { type AttemptRow, isUuid, type SubscriptionRow } from "../webhooks/model.ts";
import { inSnapshot } from "./snapshot.ts";

/**
 * Reads of webhook subscriptions and their delivery history (contract: Webhook subscriptions).
 * A subscription is visible to the tenant's admins and owners, and to members of its service's
 * project; another tenant's is indistinguishable from a missing one.
 */

type Reader = postgres.Sql | postgres.TransactionSql;

const SELECT = (sql: Reader) => sql`
  select s.id, s.trace_service_id, ts.project_id, s.name, s.url, s.event_types, s.payload_format, s.enabled, s.consecutive_failures,
    s.last_delivery_status, s.disabled_reason, s.created_at, s.updated_at
  from webhook_subscriptions s join trace_services ts on ts.id = s.trace_service_id`;

/** Projects the principal can see, or null for "all" (admins and owners). */
async function visibleProjects(sql: Reader, p: Principal): Promise<string[] | null> {
  if (hasRole(p, "admin")) return null;
  const rows = await sql<
    { project_id: string }[]
  >`select project_id from project_memberships where user_id = ${p.userId}`;
  return rows.map((r) => r.project_id);
}

/** The tenant's subscriptions on services of the principal's projects, oldest first. */
export function listSubscriptions(sql: postgres.Sql, p: Principal): Promise<SubscriptionRow[]> {
  return inSnapshot(sql, async (tx) => {
    const projects = await visibleProjects(tx, p);
    return tx<SubscriptionRow[]>`${SELECT(tx)} where s.tenant_id = ${p.tenantId}
      ${projects ? tx`and ts.project_id = any(${projects}::uuid[])` : tx``}
      order by s.created_at, s.id`;
  });
}

/** One subscription: 404 when missing or another tenant's, 403 outside the principal's projects. */
export async function getSubscription(sql: Reader, p: Principal, id: string): Promise<SubscriptionRow> {
  if (!isUuid(id)) throw notFound("no such webhook subscription");
  const [row] = await sql<SubscriptionRow[]>`${SELECT(sql)} where s.tenant_id = ${p.tenantId} and s.id = ${id}`;
  if (!row) throw notFound("no such webhook subscription");
  const projects = await visibleProjects(sql, p);
  if (projects && !projects.includes(row.project_id))
    throw forbidden("your project membership does not cover this service");
  return row;
}

/** GET /webhooks/{id}: getSubscription's two statements in one snapshot. */
export function readSubscription(sql: postgres.Sql, p: Principal, id: string): Promise<SubscriptionRow> {
  return inSnapshot(sql, (tx) => getSubscription(tx, p, id));
}

/**
 * The subscription's latest attempts, newest first (after the same checks as getSubscription):
 * attempt rows and first attempts folded into their delivery row (shared/webhooks/delivery-history.ts).
 */
export function listAttempts(sql: postgres.Sql, p: Principal, id: string, limit: number): Promise<AttemptRow[]> {
  return inSnapshot(sql, async (tx) => {
    await getSubscription(tx, p, id);
    return deliveryHistory(tx, id, limit);
  });
}
