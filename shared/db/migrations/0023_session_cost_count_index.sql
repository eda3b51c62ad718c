-- Totals of sessions/filtered with a costUsd filter (issue 28): counted on an index of
-- (service, cost) alone. The search's index on (service, cost, session) stays for the sorted
-- page and its keyset; this one's entries are a third smaller and equal costs share one entry
-- (b-tree deduplication), so the count reads fewer pages and fewer tuples. Built in the
-- migration's transaction (drizzle's migrator runs every file in one): writes to
-- session_analyses (maturations) wait for the build, reads do not; measured in
-- docs/performance.md.
CREATE INDEX "session_analyses_cost_count_idx" ON "session_analyses" USING btree ("trace_service_id","cost_usd");
