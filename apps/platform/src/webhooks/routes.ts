import type postgres from "postgres";
import { type Resource, type ResourceDeps, resource } from "../http/resource.ts";
import type { Principal } from "../auth/principal.ts";
import { doc } from "../http/schemas.ts";
import { listAttempts, listSubscriptions, readSubscription } from "../query/webhooks.ts";
import {
  Accepted,
  AttemptList,
  attemptView,
  DELIVERIES_LISTED,
  NoContent,
  RotatedSubscription,
  rotationTtl,
  Subscription,
  SubscriptionList,
  subscriptionInput,
  subscriptionPatch,
  SubscriptionWithSecret,
  subscriptionView,
  testEventType,
} from "./model.ts";

import type { WebhookOptions } from "./options.ts";
import * as svc from "./service.ts";

export type { WebhookOptions };

const TAG = "Webhooks";
const BODY_NOTE = "JSON body validated by the service (400 names the field); see docs/webhooks.md.";

export interface WebhookRouteDeps extends ResourceDeps {
  sql: postgres.Sql;
  webhooks?: WebhookOptions;
}

/** /webhooks: subscription management (contract: Webhook subscriptions). */
export function webhookRoutes(deps: WebhookRouteDeps) {
  const s = svc.webhookServiceDeps(deps.sql, deps.webhooks);
  const ctx: Ctx = { deps, s, guard: (principal, entitled) => svc.requireManager(s, principal, entitled) };
  return resource(deps, "/webhooks")
    .use((app) => subscriptionRoutes(app, ctx))
    .use((app) => subscriptionActionRoutes(app, ctx));
}

/** What the route groups share: the deps, the service's, and the role and entitlement check. */
interface Ctx {
  deps: WebhookRouteDeps;
  s: svc.WebhookServiceDeps;
  guard: (principal: Principal, entitled: boolean) => Promise<void>;
}

/** The subscriptions themselves: list, create, read, change, delete. */
function subscriptionRoutes(app: Resource, { deps, s, guard }: Ctx) {
  return app
    .get(
      "",
      async ({ principal }) => ({ data: (await listSubscriptions(deps.sql, principal)).map(subscriptionView) }),
      {
        detail: doc(TAG, "All subscriptions of the tenant (services of your projects)", SubscriptionList, {
          errors: [401],
        }),
      },
    )
    .post(
      "",
      async ({ principal, body, set }) => {
        await guard(principal, true);
        const { row, secret } = await svc.createSubscription(s, principal, subscriptionInput(body));
        set.status = 201;
        return { ...subscriptionView(row), secret };
      },
      {
        detail: doc(TAG, "Create a subscription; the secret is returned only here", SubscriptionWithSecret, {
          status: 201,
          errors: [400, 401, 403, 409],
          description: `Body: trace_service_id, name, url (https, public), event_types (session.matured, trace.matured). 403 without role admin or the webhook entitlement; 409 with 5 subscriptions on the service. ${BODY_NOTE}`,
        }),
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => subscriptionView(await readSubscription(deps.sql, principal, params.id)),
      {
        detail: doc(TAG, "One subscription with its health rollup", Subscription, { errors: [401, 403, 404] }),
      },
    )
    .put(
      "/:id",
      async ({ principal, params, body }) => {
        await guard(principal, true);
        return subscriptionView(await svc.updateSubscription(s, principal, params.id, subscriptionPatch(body)));
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
    );
}

/** What a manager does to a subscription: enable, disable, rotate its secret, and its deliveries. */
function subscriptionActionRoutes(app: Resource, { deps, s, guard }: Ctx) {
  return app
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
        const ttl = rotationTtl(body);
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
        data: (await listAttempts(deps.sql, principal, params.id, DELIVERIES_LISTED)).map(attemptView),
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
        const eventType = testEventType(body);
        set.status = 202;
        return svc.sendTestEvent(s, principal, params.id, eventType);
      },
      {
        detail: doc(TAG, "Send a signed example event (one attempt, in the history)", Accepted, {
          status: 202,
          errors: [400, 401, 403, 404, 409],
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
          errors: [400, 401, 403, 404, 409],
          description: "409 while the delivery is pending or the subscription is disabled.",
        }),
      },
    );
}
