-- Webhook rows cut (issue 36 part 3, docs/webhooks.md "Stored shape"): a delivery whose first
-- attempt succeeds keeps that attempt in its own row instead of a webhook_attempts row. Most
-- deliveries are exactly that, so the hot path writes one row (inserted, then HOT-updated) where
-- it wrote two rows and three more index entries. The delivery history
-- (GET /webhooks/:id/deliveries) reads both places and answers as before.
-- The first attempt is folded only when it starts within 30 s of the row's creation
-- (FOLDED_ATTEMPT_WINDOW in shared/webhooks/delivery-state.ts): that bound lets the history find
-- the newest folded attempts through the index below, by creation time. Existing rows keep their
-- webhook_attempts rows (nothing is moved); the new columns are null on them.
ALTER TABLE "webhook_deliveries" ADD COLUMN "first_attempt_id" uuid;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "first_status_code" integer;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "first_duration_ms" integer;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "first_attempted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "webhook_deliveries_sub_created_idx" ON "webhook_deliveries" USING btree ("subscription_id", "created_at");
