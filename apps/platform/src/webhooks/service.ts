import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { SecretBox } from "@cellar/shared/crypto";
import { badRequest, forbidden, HttpError, notFound, serviceUnavailable } from "@cellar/shared/errors";
import type { Topology } from "@cellar/shared/nats/topology";
import { MATURED_EVENT_TYPES } from "@cellar/shared/payloads";
import { type Cidr, toCidrs } from "@cellar/shared/webhooks/address";
import {
  deliveryBody,
  newDeliveryId,
  publishDeliveryJobs,
  type WebhookEventType,
} from "@cellar/shared/webhooks/deliveries";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { checkDestination, type ResolveDns, systemResolveDns } from "@cellar/shared/webhooks/destination";
import { generateWebhookSecret } from "@cellar/shared/webhooks/signing";
import { hasRole, type Principal } from "../auth/principal.ts";
import { getSubscription } from "../query/webhooks.ts";
import { isUuid, MAX_SUBSCRIPTIONS_PER_SERVICE, type SubscriptionRow } from "./model.ts";
import type { WebhookOptions } from "./options.ts";

export interface WebhookServiceDeps {
  sql: postgres.Sql;
  secretBox?: SecretBox;
  resolveDns: ResolveDns;
  allowlist: Cidr[];
  now: () => Date;
  /** For test sends and manual re-sends (published to DELIVERIES for the dispatcher). */
  js?: JetStreamClient;
  topology?: Topology;
}

/** The service's dependencies from the platform's webhook options (defaults: system DNS, the clock). */
export function webhookServiceDeps(sql: postgres.Sql, o: WebhookOptions = {}): WebhookServiceDeps {
  return {
    sql,
    secretBox: o.secretBox,
    resolveDns: o.resolveDns ?? systemResolveDns,
    allowlist: toCidrs(o.insecureAllowlist),
    now: o.now ?? (() => new Date()),
    js: o.js,
    topology: o.topology,
  };
}

const conflict = (message: string) => new HttpError(409, message);

export function requireAdmin(p: Principal): void {
  if (!hasRole(p, "admin")) throw forbidden("managing webhook subscriptions needs role admin or higher");
}

/** Role first, then the entitlement (`entitled`): both 403, the role one says more. */
export async function requireManager(deps: WebhookServiceDeps, p: Principal, entitled: boolean): Promise<void> {
  requireAdmin(p);
  if (entitled) await requireEntitlement(deps.sql, p);
}

export async function requireEntitlement(sql: postgres.Sql, p: Principal): Promise<void> {
  const [t] = await sql<{ webhooks_enabled: boolean }[]>`select webhooks_enabled from tenants where id = ${p.tenantId}`;
  if (!t?.webhooks_enabled) throw forbidden("outbound webhooks are not enabled for this organization");
}

/** 400 naming the url and the reason, unless it is HTTPS, credential-free and public. */
export async function validateUrl(deps: WebhookServiceDeps, url: string): Promise<void> {
  const check = await checkDestination(url, { resolveDns: deps.resolveDns, allowlist: deps.allowlist });
  if (!check.ok) throw badRequest(`invalid url: ${check.message}`);
}

function box(deps: WebhookServiceDeps): SecretBox {
  if (!deps.secretBox) throw serviceUnavailable("webhook secrets are not configured on this server", 60);
  return deps.secretBox;
}

export async function createSubscription(
  deps: WebhookServiceDeps,
  p: Principal,
  input: { traceServiceId: string; name: string; url: string; eventTypes: string[]; payloadFormat?: string },
): Promise<{ row: SubscriptionRow; secret: string }> {
  if (!isUuid(input.traceServiceId)) throw badRequest("invalid trace_service_id: no such trace service");
  await validateUrl(deps, input.url);
  const secret = generateWebhookSecret();
  // The row id is the secret's associated data, so it is chosen here, before sealing.
  const newId = crypto.randomUUID();
  const sealed = await box(deps).seal(secret, newId);
  const now = deps.now();
  const id = await deps.sql.begin(async (tx) => {
    // The row lock serializes creates on one service, so two at once cannot both take slot 5.
    const [svc] =
      await tx`select id from trace_services where id = ${input.traceServiceId} and tenant_id = ${p.tenantId} for update`;
    if (!svc) throw badRequest("invalid trace_service_id: no such trace service");
    const [{ n }] = await tx<
      { n: number }[]
    >`select count(*)::int as n from webhook_subscriptions where trace_service_id = ${input.traceServiceId}`;
    if (n >= MAX_SUBSCRIPTIONS_PER_SERVICE) {
      throw conflict(
        `trace service already has ${MAX_SUBSCRIPTIONS_PER_SERVICE} webhook subscriptions (disabled ones count); delete one to free a slot`,
      );
    }
    const [row] = await tx<{ id: string }[]>`
      insert into webhook_subscriptions (id, tenant_id, trace_service_id, name, url, event_types, payload_format, secret_encrypted, created_at, updated_at)
      values (${newId}, ${p.tenantId}, ${input.traceServiceId}, ${input.name}, ${input.url}, ${input.eventTypes}, ${input.payloadFormat ?? "standard"}, ${sealed}, ${now}, ${now})
      returning id`;
    return row.id;
  });
  return { row: await getSubscription(deps.sql, p, id), secret };
}

export async function updateSubscription(
  deps: WebhookServiceDeps,
  p: Principal,
  id: string,
  patch: { name?: string; url?: string; eventTypes?: string[]; payloadFormat?: string },
) {
  const current = await getSubscription(deps.sql, p, id);
  if (patch.url !== undefined && patch.url !== current.url) await validateUrl(deps, patch.url);
  await deps.sql`update webhook_subscriptions set
      name = ${patch.name ?? current.name}, url = ${patch.url ?? current.url},
      event_types = ${patch.eventTypes ?? current.event_types}, payload_format = ${patch.payloadFormat ?? current.payload_format},
      updated_at = ${deps.now()}
    where id = ${id} and tenant_id = ${p.tenantId}`;
  return getSubscription(deps.sql, p, id);
}

/** Deliveries and attempts go with it (foreign keys cascade). */
export async function deleteSubscription(deps: WebhookServiceDeps, p: Principal, id: string): Promise<void> {
  await getSubscription(deps.sql, p, id);
  await deps.sql`delete from webhook_subscriptions where id = ${id} and tenant_id = ${p.tenantId}`;
}

/** Turns it on and clears platform-set failure state; the URL must still pass the checks. */
export async function enableSubscription(deps: WebhookServiceDeps, p: Principal, id: string) {
  const current = await getSubscription(deps.sql, p, id);
  await validateUrl(deps, current.url);
  await deliveryState.enableSubscription(deps.sql, id, p.tenantId, deps.now());
  return getSubscription(deps.sql, p, id);
}

/** A user's disable leaves no reason; an already platform-disabled one keeps its reason. */
export async function disableSubscription(deps: WebhookServiceDeps, p: Principal, id: string) {
  await getSubscription(deps.sql, p, id);
  await deps.sql`update webhook_subscriptions set disabled_reason = case when enabled then null else disabled_reason end,
      enabled = false, updated_at = ${deps.now()}
    where id = ${id} and tenant_id = ${p.tenantId}`;
  return getSubscription(deps.sql, p, id);
}

/**
 * New secret now; the old one keeps signing alongside it for `ttlHours` (0 = cut over at once).
 * Rotating again inside a window drops the oldest: at most two signatures ever.
 */
export async function rotateSecret(deps: WebhookServiceDeps, p: Principal, id: string, ttlHours: number) {
  await getSubscription(deps.sql, p, id);
  const secret = generateWebhookSecret();
  // Same associated data for both columns: the current secret moves to previous unchanged.
  const sealed = await box(deps).seal(secret, id);
  const now = deps.now();
  const expiresAt = ttlHours > 0 ? new Date(now.getTime() + ttlHours * 3600_000) : null;
  await deps.sql`update webhook_subscriptions set
      previous_secret_encrypted = ${expiresAt ? deps.sql`secret_encrypted` : null},
      previous_secret_expires_at = ${expiresAt}, secret_encrypted = ${sealed}, updated_at = ${now}
    where id = ${id} and tenant_id = ${p.tenantId}`;
  return { row: await getSubscription(deps.sql, p, id), secret, previousSecretExpiresAt: expiresAt };
}

function sender(deps: WebhookServiceDeps) {
  if (!deps.js || !deps.topology) throw serviceUnavailable("webhook sending is not configured on this server", 60);
  return { js: deps.js, topology: deps.topology };
}

/** A signed example event through the dispatcher: one attempt, shown in the delivery history. */
export async function sendTestEvent(
  deps: WebhookServiceDeps,
  p: Principal,
  id: string,
  type: WebhookEventType | undefined,
) {
  const { js, topology } = sender(deps);
  const sub = await getSubscription(deps.sql, p, id);
  if (!sub.enabled) throw conflict("the subscription is disabled; enable it first");
  // Test sends carry a maturation's example data: default to the first such type the subscription
  // lists (one listing only monitor events gets session.matured; docs/monitors.md).
  const eventType =
    type ??
    ((sub.event_types.find((t) => (MATURED_EVENT_TYPES as readonly string[]).includes(t)) ??
      "session.matured") as WebhookEventType);
  const [svc] = await deps.sql<{ name: string }[]>`select name from trace_services where id = ${sub.trace_service_id}`;
  const deliveryId = newDeliveryId();
  const now = deps.now();
  const data = {
    tenant_id: p.tenantId,
    trace_service_id: sub.trace_service_id,
    service_name: svc.name,
    maturation_count: 1,
    occurred_at: now.toISOString(),
    ...(eventType === "session.matured" ? { session_id: "test_session" } : { trace_id: "test_trace" }),
  };
  await deliveryState.insert(deps.sql, [
    {
      id: deliveryId,
      tenant_id: p.tenantId,
      subscription_id: id,
      event_type: eventType,
      event_key: `test:${deliveryId}`,
      body: deliveryBody({ id: deliveryId, type: eventType, timestamp: now, data }),
      enqueued_at: now,
    },
  ]);
  try {
    await publishDeliveryJobs(js, topology, [
      { job: { deliveryId, tenantId: p.tenantId, manual: true }, msgID: deliveryId },
    ]);
  } catch (err) {
    await deliveryState.discardUnsent(deps.sql, deliveryId); // nothing will ever attempt it
    throw err;
  }
  return { id: deliveryId, type: eventType, status: "pending" as const };
}

/** Re-sends a finished delivery once, same id, body and timestamp; attempts keep counting. */
export async function retryDelivery(deps: WebhookServiceDeps, p: Principal, id: string, deliveryId: string) {
  const { js, topology } = sender(deps);
  const sub = await getSubscription(deps.sql, p, id);
  if (!sub.enabled) throw conflict("the subscription is disabled; enable it first");
  const claimed = await deliveryState.claimForResend(deps.sql, deliveryId, id);
  if (claimed === undefined) throw notFound("no such delivery");
  if (claimed === null) throw conflict("the delivery is still being attempted");
  try {
    await publishDeliveryJobs(js, topology, [
      { job: { deliveryId, tenantId: p.tenantId, manual: true }, msgID: `${deliveryId}:resend:${claimed.attempts}` },
    ]);
  } catch (err) {
    // Put it back, or it would look "in progress" forever and refuse every later retry.
    await deliveryState.releaseClaim(deps.sql, deliveryId, claimed.previousStatus);
    throw err;
  }
  return { id: deliveryId, status: "pending" as const };
}
