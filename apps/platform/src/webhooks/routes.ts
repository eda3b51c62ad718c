import { Elysia } from "elysia";
import type postgres from "postgres";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { badRequest } from "@cellar/shared/errors";
import { MATURED_EVENT_TYPES } from "@cellar/shared/payloads";
import { toCidrs } from "@cellar/shared/webhooks/address";
import type { WebhookEventType } from "@cellar/shared/webhooks/deliveries";
import { systemResolveDns } from "@cellar/shared/webhooks/destination";
import { platformAuth } from "../auth/plugin.ts";
import type { SignInTokens } from "../auth/principal.ts";
import type { PlatformLimiter } from "../http/limits.ts";
import { doc } from "../http/schemas.ts";
import {
  Accepted,
  AttemptList,
  attemptView,
  DELIVERIES_LISTED,
  NoContent,
  objectBody,
  parseEventTypes,
  parseName,
  parsePayloadFormat,
  parseTtlHours,
  parseUrlField,
  rejectUnknown,
  RotatedSubscription,
  Subscription,
  SubscriptionList,
  SubscriptionWithSecret,
  subscriptionView,
  type AttemptRow,
} from "./model.ts";

const TAG = "Webhooks";
const BODY_NOTE = "JSON body validated by the service (400 names the field); see docs/webhooks.md.";
import * as svc from "./service.ts";

import type { WebhookOptions } from "./options.ts";
export type { WebhookOptions };

export interface WebhookRouteDeps {
  sql: postgres.Sql;
  keys: KeyResolver;
  signIns?: SignInTokens;
  webhooks?: WebhookOptions;
  limiter?: PlatformLimiter;
}

/** /webhooks: subscription management (contract: Webhook subscriptions). */
export function webhookRoutes(deps: WebhookRouteDeps) {
  const o = deps.webhooks ?? {};
  const s: svc.WebhookServiceDeps = {
    sql: deps.sql,
    secretBox: o.secretBox,
    resolveDns: o.resolveDns ?? systemResolveDns,
    allowlist: toCidrs(o.insecureAllowlist),
    now: o.now ?? (() => new Date()),
    js: o.js,
    topology: o.topology,
  };
  /** Role first, then the entitlement: both 403, the role one says more. */
  const guard = async (principal: Parameters<typeof svc.requireAdmin>[0], entitled: boolean) => {
    svc.requireAdmin(principal);
    if (entitled) await svc.requireEntitlement(deps.sql, principal);
  };

  return new Elysia({ prefix: "/webhooks" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get("", async ({ principal }) => ({ data: (await svc.listSubscriptions(s, principal)).map(subscriptionView) }), {
      detail: doc(TAG, "All subscriptions of the tenant (services of your projects)", SubscriptionList, {
        errors: [401],
      }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        await guard(principal, true);
        const b = objectBody(body);
        rejectUnknown(b, ["trace_service_id", "name", "url", "event_types", "payload_format"]);
        if (typeof b.trace_service_id !== "string" || !b.trace_service_id)
          throw badRequest("invalid trace_service_id: must be a string");
        const input = {
          traceServiceId: b.trace_service_id,
          name: parseName(b.name),
          url: parseUrlField(b.url),
          eventTypes: parseEventTypes(b.event_types),
          payloadFormat: b.payload_format === undefined ? undefined : parsePayloadFormat(b.payload_format),
        };
        const { row, secret } = await svc.createSubscription(s, principal, input);
        set.status = 201;
        return { ...subscriptionView(row), secret };
      },
      {
        detail: doc(TAG, "Create a subscription; the secret is returned only here", SubscriptionWithSecret, {
          status: 201,
          errors: [400, 401, 403],
          description: `Body: trace_service_id, name, url (https, public), event_types (session.matured, trace.matured). 403 without role admin or the webhook entitlement; 409 with 5 subscriptions on the service. ${BODY_NOTE}`,
        }),
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => subscriptionView(await svc.getSubscription(s, principal, params.id)),
      {
        detail: doc(TAG, "One subscription with its health rollup", Subscription, { errors: [401, 403, 404] }),
      },
    )
    .put(
      "/:id",
      async ({ principal, params, body }) => {
        await guard(principal, true);
        const b = objectBody(body);
        rejectUnknown(b, ["name", "url", "event_types", "payload_format"]);
        if (Object.keys(b).length === 0) throw badRequest("invalid body: give at least one of name, url, event_types");
        const patch = {
          name: b.name === undefined ? undefined : parseName(b.name),
          url: b.url === undefined ? undefined : parseUrlField(b.url),
          eventTypes: b.event_types === undefined ? undefined : parseEventTypes(b.event_types),
          payloadFormat: b.payload_format === undefined ? undefined : parsePayloadFormat(b.payload_format),
        };
        return subscriptionView(await svc.updateSubscription(s, principal, params.id, patch));
      },
      {
        detail: doc(TAG, "Change name, url or event_types", Subscription, {
          description: `Body: any of name, url, event_types. ${BODY_NOTE}`,
        }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await guard(principal, false);
        await svc.deleteSubscription(s, principal, params.id);
        set.status = 204;
        return "";
      },
      {
        detail: doc(TAG, "Delete the subscription and its delivery history", NoContent, {
          status: 204,
          errors: [401, 403, 404],
        }),
      },
    )
    .post(
      "/:id/enable",
      async ({ principal, params }) => {
        await guard(principal, true);
        return subscriptionView(await svc.enableSubscription(s, principal, params.id));
      },
      { detail: doc(TAG, "Enable; clears platform-set failure state (the url is checked again)", Subscription) },
    )
    .post(
      "/:id/disable",
      async ({ principal, params }) => {
        await guard(principal, false);
        return subscriptionView(await svc.disableSubscription(s, principal, params.id));
      },
      { detail: doc(TAG, "Disable; works without the entitlement", Subscription, { errors: [401, 403, 404] }) },
    )
    .post(
      "/:id/rotate-secret",
      async ({ principal, params, body }) => {
        await guard(principal, true);
        const b = objectBody(body, true);
        rejectUnknown(b, ["previous_secret_ttl_hours"]);
        const ttl = parseTtlHours(b.previous_secret_ttl_hours);
        const { row, secret, previousSecretExpiresAt } = await svc.rotateSecret(s, principal, params.id, ttl);
        return {
          ...subscriptionView(row),
          secret,
          previous_secret_expires_at: previousSecretExpiresAt?.toISOString() ?? null,
        };
      },
      {
        detail: doc(
          TAG,
          "New signing secret, returned once; the old one keeps signing for the window",
          RotatedSubscription,
          {
            description: `Optional body: previous_secret_ttl_hours (integer 0-168, default 24; 0 cuts over at once). ${BODY_NOTE}`,
          },
        ),
      },
    )
    .get(
      "/:id/deliveries",
      async ({ principal, params }) => ({
        data: ((await svc.listAttempts(s, principal, params.id, DELIVERIES_LISTED)) as unknown as AttemptRow[]).map(
          attemptView,
        ),
      }),
      {
        detail: doc(TAG, "The 10 most recent delivery attempts, newest first", AttemptList, {
          errors: [401, 403, 404],
        }),
      },
    )
    .post(
      "/:id/test",
      async ({ principal, params, body, set }) => {
        await guard(principal, true);
        // Each send makes the dispatcher POST to the tenant's destination: throttled per tenant.
        Object.assign(set.headers, deps.limiter?.sends.take(principal.tenantId));
        const b = objectBody(body, true);
        rejectUnknown(b, ["event_type"]);
        if (b.event_type !== undefined && !(MATURED_EVENT_TYPES as readonly unknown[]).includes(b.event_type)) {
          throw badRequest(`invalid event_type: must be one of ${MATURED_EVENT_TYPES.join(", ")}`);
        }
        set.status = 202;
        return svc.sendTestEvent(s, principal, params.id, b.event_type as WebhookEventType | undefined);
      },
      {
        detail: doc(TAG, "Send a signed example event (one attempt, in the history)", Accepted, {
          status: 202,
          description: `Optional body: event_type (default: the subscription's first). 409 when disabled. ${BODY_NOTE}`,
        }),
      },
    )
    .post(
      "/:id/deliveries/:deliveryId/retry",
      async ({ principal, params, set }) => {
        await guard(principal, true);
        Object.assign(set.headers, deps.limiter?.sends.take(principal.tenantId));
        set.status = 202;
        return svc.retryDelivery(s, principal, params.id, params.deliveryId);
      },
      {
        detail: doc(TAG, "Re-send a finished delivery once (same id, body and timestamp)", Accepted, {
          status: 202,
          description: "409 while the delivery is pending or the subscription is disabled.",
        }),
      },
    );
}
