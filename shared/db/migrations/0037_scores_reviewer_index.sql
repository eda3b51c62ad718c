-- The reviewers' scores of a service under one name (GET /evaluators/:id/agreement,
-- docs/evaluations.md "Review"): the agreement read starts from them and joins each to the judge's
-- score of its session (scores_session_idx). Without it the only way in was every score of the
-- service (scores_session_idx leads with the session): a hash join over every judgement, linear in
-- them (41-44 ms p99 at 60,000 judgements on the 3-million-trace cluster, docs/performance.md).
-- Partial: only reviewer scores are entries, so the scores written by ingest and by evaluators pay
-- nothing for it.
CREATE INDEX IF NOT EXISTS "scores_reviewer_idx" ON "scores" USING btree ("trace_service_id", "name", "session_id") WHERE "source" = 'reviewer' AND "session_id" IS NOT NULL;
