-- The attempt claim of a delivery (docs/webhooks.md "One attempt at a time"): until when one
-- attempt is in hand. Two messages could attempt one delivery at once (a redelivered MATURED
-- batch owning every pending delivery of its events while another message's first attempt was in
-- flight; a redelivered DELIVERIES job beside the first), and each POSTed it. An attempt now
-- starts only by setting this column where it is unset or past, in the fan-out's insert or in one
-- conditional update. Nullable, no default, no index: instant, and updates stay HOT.
ALTER TABLE "webhook_deliveries" ADD COLUMN "attempt_leased_until" timestamp with time zone;
