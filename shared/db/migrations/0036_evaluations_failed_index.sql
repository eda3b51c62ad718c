-- The failed judgements of an evaluator, newest first (GET /evaluators/:id/evaluations?status=failed,
-- docs/evaluations.md): failures are rare, so without an index of their own the list reads every
-- judgement of the evaluator (evaluations_evaluator_created_idx keeps no status) and sorts them:
-- linear in the evaluator's judgements. On the 3-million-trace cluster (60,000 judgements, 60
-- failed; docs/performance-journal.md "At 3 million stored, the round's final tree") the read took
-- p50 10.4 / p99 13.5 ms through the platform without it, 1.2 / 3.8 ms with it. Partial: only
-- failed rows are entries, so the judgements written on the hot path pay nothing for it.
CREATE INDEX IF NOT EXISTS "evaluations_failed_idx" ON "evaluations" USING btree ("evaluator_id", "created_at", "id") WHERE "status" = 'failed';
