-- The webhook write path priced per delivery (issue 28, docs/performance.md "Dispatch: one
-- delivery priced"). No stored shape changes; existing rows answer as before
-- (test/upgrade-webhooks.test.ts).
-- 1. A delivery row is updated once, moments after its insert (delivered, or pending with its
--    retry time). With pages filled to 100% that update found no room on its page three times in
--    four, so it wrote a new entry in each of the table's three indexes; with room left on every
--    page it is a HOT update (no index writes). Applies to pages written from now on; no rewrite.
ALTER TABLE "webhook_deliveries" SET (fillfactor = 50);--> statement-breakpoint
-- 2. Two foreign keys that only repeated a cascade the table already gets through another one,
--    each checked (and its parent row share-locked, a WAL record) on every insert: a delivery's
--    tenant is its subscription's (whose own key cascades from the tenant), and an attempt's
--    subscription is its delivery's (whose key cascades from the subscription). Deleting a
--    tenant or a subscription still removes every delivery and attempt under it.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT IF EXISTS "webhook_deliveries_tenant_id_tenants_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT IF EXISTS "webhook_attempts_subscription_id_webhook_subscriptions_id_fk";
