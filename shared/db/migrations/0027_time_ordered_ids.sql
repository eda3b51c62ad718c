-- Issue 28: ids of rows written on every trace, event, maturation or delivery attempt are
-- time-ordered (UUID version 7, Postgres 18's uuidv7()) instead of random (shared/db/schema/ids.ts).
-- A random key touches a random leaf page of its index per insert, and of every key that leads
-- with it (trace_payloads, trace_analyses, transcript_items): at millions of rows those pages are
-- past the buffer cache, and random inserts split pages half full. Existing rows keep their ids;
-- both kinds compare and sort alike. Catalog only.
ALTER TABLE "sessions" ALTER COLUMN "id" SET DEFAULT uuidv7();--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "id" SET DEFAULT uuidv7();--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "id" SET DEFAULT uuidv7();--> statement-breakpoint
ALTER TABLE "findings" ALTER COLUMN "id" SET DEFAULT uuidv7();--> statement-breakpoint
ALTER TABLE "webhook_attempts" ALTER COLUMN "id" SET DEFAULT uuidv7();
