-- The ledger counts INGEST's dead letters from DEAD_LETTERS itself (the processor's durable
-- consumer `processor-ledger`), once each: a row per dead letter counted, keyed by its sequence in
-- DEAD_LETTERS and the instant JetStream stored it (a stream created again numbers from 1 again),
-- inserted in the transaction that adds its counts, so a dead letter delivered again (a lost
-- ack, a processor killed before it acked) adds nothing. Pruned with the counts after 31 days
-- (DEAD_LETTERS keeps a message 30). docs/ledger.md, "Dead letters, counted from DEAD_LETTERS".
-- The dead letter's tenant leads the key, as on every table distributed by tenant (docs/scaling.md
-- "Sharding by tenant"): the key lands on the shard of the counts it is inserted with. No foreign
-- key: a dead letter of a tenant that does not exist (the usual reason it is one) is still
-- recorded once, while its counts are dropped (shared/ledger/upsert.ts); the pruning removes it.
CREATE TABLE "ledger_dead_letters" (
  "tenant_id" uuid NOT NULL,
  "seq" bigint NOT NULL,
  "stored_at" timestamptz NOT NULL,
  "counted_at" timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT "ledger_dead_letters_pkey" PRIMARY KEY ("tenant_id", "seq", "stored_at")
);
CREATE INDEX "ledger_dead_letters_counted_at_idx" ON "ledger_dead_letters" ("counted_at");
