-- Issue 28: one row per item id in a session is the database's again. Migration 0022 replaced the
-- unique btree (session_pk, item_id, tenant_id) with a hash index on item_id and left the rule to
-- the writer, which can only see the rows its own maturation kept: on CI a session's transcript
-- came back with two items twice (test/sdk-e2e.test.ts). The item read by id filters on session_pk
-- too, so the btree serves it as it did before 0022. A duplicate written meanwhile keeps its lowest
-- position, as the conflict on the unique index kept the first.
DELETE FROM "transcript_items" t USING "transcript_items" u
  WHERE t.session_pk = u.session_pk AND t.tenant_id = u.tenant_id AND t.item_id = u.item_id AND t.position > u.position;--> statement-breakpoint
DROP INDEX IF EXISTS "transcript_items_item_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "transcript_items_item_uq" ON "transcript_items" USING btree ("session_pk", "item_id", "tenant_id");
