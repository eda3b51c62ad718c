-- Unpriced model calls in the overview (issue 40, docs/pricing.md): how many calls of each
-- bucket's sessions the price book could not price, per model and in total (model ''). Kept by
-- the processor's rollups consumer like the other counts; rows rolled up before this column
-- count 0 until their session matures again.
ALTER TABLE "overview_rollups" ADD COLUMN "unpriced_calls" integer NOT NULL DEFAULT 0;
