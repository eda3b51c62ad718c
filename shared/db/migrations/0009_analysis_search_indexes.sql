-- Filtered searches on analysis fields (issue 16, docs/platform-api.md "Analysis fields"): one
-- b-tree per filterable/sortable rollup, led by the service and ending in the row id, so a sort
-- on the field walks the index in order (keyset pages seek into it) and a filter + total counts
-- index entries instead of every session of the service.
--
-- The three latency metrics become typed columns (they were only inside the metrics jsonb), so
-- `metrics.latencyP50Ms` / `P95Ms` / `MaxMs` filters are index ranges too. They hold exactly
-- what the jsonb key holds when it is a number, else null (the filter's existing semantics);
-- the maturation writes them from then on. The backfill below is one statement: it row-locks
-- every analysis while it runs (maturations of those sessions wait; reads do not), measured in
-- docs/performance.md. The index builds block writes to the two tables while they run.
ALTER TABLE "session_analyses" ADD COLUMN "latency_p50_ms" double precision;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD COLUMN "latency_p95_ms" double precision;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD COLUMN "latency_max_ms" double precision;--> statement-breakpoint
UPDATE "session_analyses" SET
  "latency_p50_ms" = CASE WHEN jsonb_typeof("metrics" -> 'latencyP50Ms') = 'number' THEN ("metrics" ->> 'latencyP50Ms')::float8 END,
  "latency_p95_ms" = CASE WHEN jsonb_typeof("metrics" -> 'latencyP95Ms') = 'number' THEN ("metrics" ->> 'latencyP95Ms')::float8 END,
  "latency_max_ms" = CASE WHEN jsonb_typeof("metrics" -> 'latencyMaxMs') = 'number' THEN ("metrics" ->> 'latencyMaxMs')::float8 END
WHERE "metrics" ?| array['latencyP50Ms', 'latencyP95Ms', 'latencyMaxMs'];--> statement-breakpoint
CREATE INDEX "session_analyses_duration_idx" ON "session_analyses" USING btree ("trace_service_id","duration_ms","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_turns_idx" ON "session_analyses" USING btree ("trace_service_id","turns","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_model_calls_idx" ON "session_analyses" USING btree ("trace_service_id","model_calls","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_tool_calls_idx" ON "session_analyses" USING btree ("trace_service_id","tool_calls","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_total_tokens_idx" ON "session_analyses" USING btree ("trace_service_id","total_tokens","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_errors_idx" ON "session_analyses" USING btree ("trace_service_id","errors","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_problems_idx" ON "session_analyses" USING btree ("trace_service_id","problems","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_cost_idx" ON "session_analyses" USING btree ("trace_service_id","cost_usd","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_latency_p50_idx" ON "session_analyses" USING btree ("trace_service_id","latency_p50_ms","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_latency_p95_idx" ON "session_analyses" USING btree ("trace_service_id","latency_p95_ms","session_pk");--> statement-breakpoint
CREATE INDEX "session_analyses_latency_max_idx" ON "session_analyses" USING btree ("trace_service_id","latency_max_ms","session_pk");--> statement-breakpoint
CREATE INDEX "trace_analyses_cost_idx" ON "trace_analyses" USING btree ("trace_service_id","cost_usd","trace_pk");
