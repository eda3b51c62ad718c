-- The ledger's reconciliation reads every tenant's counts of the last two hours, and its pruning
-- deletes counts older than 31 days, each by minute: without an index on it both read the whole
-- table (tenants x services x stages x 44,640 minutes at most). docs/ledger.md.
CREATE INDEX "ledger_counts_minute_idx" ON "ledger_counts" ("minute");
