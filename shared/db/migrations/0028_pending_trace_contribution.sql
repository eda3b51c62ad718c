-- Issue 36 (analyse once): what a trace contributes to its own analysis, computed by the processor
-- when it writes the trace, while the payload is in memory: `{ request: { model }, responses }` as
-- JSON text (apps/processor/src/analysis/contribution.ts). Trace maturation reads it instead of
-- inflating and parsing the whole payload again, and its claim sets it back to null: it is kept
-- only while the trace is pending (docs/analyse-once.md). Null on rows written before: those are
-- read from their payload as before. Catalog only (a nullable column without a default): no rewrite.
ALTER TABLE "pending_traces" ADD COLUMN "contribution" text;
