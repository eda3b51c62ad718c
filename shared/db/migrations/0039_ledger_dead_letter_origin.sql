-- A dead letter is counted once per original message, not once per copy in DEAD_LETTERS (issue
-- 41): the same INGEST message (or batch item) set aside again after its acknowledgement was lost
-- more than 10 minutes later (past DEAD_LETTERS's duplicate window) is a second message there,
-- which was counted again. The key is now the original's identity: its message id in
-- DEAD_LETTERS (`<INGEST stream>:<seq>[:<item>]`) and the instant JetStream stored the original
-- in INGEST (`Cellar-DL-Origin-At`; a stream created again numbers from 1 again). A dead letter
-- without that header (written before it) keeps its own identity, `dead-letter:<its seq>` and the
-- instant DEAD_LETTERS stored it, which is what the keys already recorded become here, so one
-- recorded before this migration and delivered again after it is not counted again.
-- docs/ledger.md, "Dead letters, counted from DEAD_LETTERS".
ALTER TABLE "ledger_dead_letters" ADD COLUMN "origin" text;
--> statement-breakpoint
UPDATE "ledger_dead_letters" SET "origin" = 'dead-letter:' || "seq";
--> statement-breakpoint
ALTER TABLE "ledger_dead_letters" ALTER COLUMN "origin" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "ledger_dead_letters" DROP CONSTRAINT "ledger_dead_letters_pkey";
--> statement-breakpoint
ALTER TABLE "ledger_dead_letters" DROP COLUMN "seq";
--> statement-breakpoint
ALTER TABLE "ledger_dead_letters" RENAME COLUMN "stored_at" TO "origin_at";
--> statement-breakpoint
ALTER TABLE "ledger_dead_letters" ADD CONSTRAINT "ledger_dead_letters_pkey" PRIMARY KEY ("tenant_id", "origin", "origin_at");
