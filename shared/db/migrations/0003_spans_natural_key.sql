-- The surrogate id goes first (it held the "spans_pkey" name); the existing unique index becomes
-- the primary key in place, without rebuilding it.
ALTER TABLE "spans" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_pkey" PRIMARY KEY USING INDEX "spans_service_span_uq";
