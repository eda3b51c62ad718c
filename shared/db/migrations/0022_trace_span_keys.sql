-- A trace's span ids on its own row (issue 28, docs/performance.md "Stored bytes per trace
-- (issue 28, second round)"). Since migration 0017 every span id was a `span_ids` row of its own
-- (tenant, service, id, trace: ~85 B of heap and ~80 B of two index entries per span, ~390 B per
-- trace). A new trace keeps them as `span_keys`, the ids as spanIdKey spells them (shared/spans.ts),
-- written with the row (which is never updated), and a GIN index finds the trace holding an id:
-- ~100 B per trace. The span ids themselves are unchanged. `fastupdate = off`: an insert adds its
-- keys to the index at once, so a lookup never scans a pending list.
-- Traces written before keep their `span_ids` rows and every read takes those too: their answers
-- stay byte for byte (test/upgrade-storage-shape.test.ts). Nullable column with no default: no
-- rewrite. The index build reads the table once (every old row null, so the index stays empty),
-- blocking trace inserts while it reads: about 1 s per million traces here, warm (docs/performance.md).
ALTER TABLE "traces" ADD COLUMN "span_keys" int8[];--> statement-breakpoint
CREATE INDEX "traces_span_keys_idx" ON "traces" USING gin ("span_keys") WITH (fastupdate = off) WHERE "span_keys" IS NOT NULL;
--> statement-breakpoint
-- Transcript items: the unique btree on (session_pk, item_id, tenant_id) was about 376 B per
-- trace (3.4 items, ~105 B per entry at ~65% full), the largest index of the database. Every
-- read but the item by id uses the primary key; that one is served by a hash index on item_id
-- (filtered on the session), about 150 B per trace. One row per item id in a session is kept by
-- the writer, which skips a row whose id the session already has exactly as the insert's
-- conflict on this key did (persist.ts; test/upgrade-storage-shape.test.ts checks the two agree).
-- The build reads transcript_items once while its writers (maturation, not ingestion) wait.
DROP INDEX "transcript_items_item_uq";--> statement-breakpoint
CREATE INDEX "transcript_items_item_idx" ON "transcript_items" USING hash ("item_id");
