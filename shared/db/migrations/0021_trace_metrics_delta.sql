-- A trace's metrics stored as what differs from what its trace row already says (issue 28,
-- docs/performance.md "Stored bytes per trace (issue 28, second round)"). The metrics of a
-- one-call trace repeat its row: duration, the three token sums, the model, the cost (a column
-- of its own), and a cost-by-model entry that repeats the top-level sums. `metrics_delta` keeps
-- only the keys whose value differs from `trace_metrics_base` (built from the trace row and
-- `cost_usd`), a key `-` listing the base's keys the metrics lack, and `costByModel` only when it
-- differs from the one entry the top level implies; null when nothing differs.
-- `trace_metrics_restore(delta, base)` rebuilds the object; the writer
-- (apps/processor/src/maturation/persist.ts) checks in the same statement that it rebuilds to
-- the metrics (jsonb equality: equal numbers parse to the same JavaScript number) and stores the
-- full object in `metrics` otherwise, as every row written before keeps it. Readers take
-- `metrics` when set, else the rebuild (shared/db/trace-metrics.ts). The functions never change:
-- a change of base is a new function, since stored deltas are read against this one.
-- Nullable columns, no default: no rewrite, no backfill; the old rows read as they are.
ALTER TABLE "trace_analyses" ALTER COLUMN "metrics" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD COLUMN "metrics_delta" jsonb;--> statement-breakpoint
CREATE FUNCTION trace_metrics_base(model text, start_time timestamptz, end_time timestamptz, prompt_tokens bigint,
  completion_tokens bigint, total_tokens bigint, cost_usd float8) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select jsonb_build_object(
    'durationMs', trim_scale(extract(epoch from end_time - start_time) * 1000),
    'modelCalls', 1, 'toolCalls', 0,
    'promptTokens', prompt_tokens, 'completionTokens', completion_tokens, 'totalTokens', total_tokens,
    'cachedTokens', 0, 'reasoningTokens', 0,
    'latencyP50Ms', trim_scale(extract(epoch from end_time - start_time) * 1000),
    'latencyP95Ms', trim_scale(extract(epoch from end_time - start_time) * 1000),
    'latencyMaxMs', trim_scale(extract(epoch from end_time - start_time) * 1000),
    'costUsd', cost_usd, 'costComplete', cost_usd is not null, 'pricedCostUsd', coalesce(cost_usd, 0),
    'unpricedModels', case when cost_usd is null then jsonb_build_array(coalesce(model, 'unknown')) else '[]'::jsonb end,
    'finishReasons', jsonb_build_object('stop', 1),
    'models', jsonb_build_array(coalesce(model, 'unknown')),
    'priceTableVersion', '2026-11-25')
$$;--> statement-breakpoint
-- The one cost-by-model entry a single-model trace's top level implies.
CREATE FUNCTION trace_metrics_by_model(m jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select jsonb_build_array(jsonb_build_object(
    'model', m -> 'models' -> 0, 'calls', m -> 'modelCalls',
    'promptTokens', m -> 'promptTokens', 'cachedTokens', m -> 'cachedTokens',
    'completionTokens', m -> 'completionTokens', 'reasoningTokens', m -> 'reasoningTokens',
    'totalTokens', m -> 'totalTokens', 'costUsd', m -> 'costUsd',
    'priced', coalesce(m -> 'costUsd', 'null'::jsonb) <> 'null'::jsonb, 'note', null))
$$;--> statement-breakpoint
CREATE FUNCTION trace_metrics_restore(delta jsonb, base jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select case
    when coalesce(delta, '{}') ? 'costByModel' then top || jsonb_build_object('costByModel', delta -> 'costByModel')
    when coalesce(delta -> '-', '[]') ? 'costByModel' then top
    else top || jsonb_build_object('costByModel', trace_metrics_by_model(top)) end
  from (select (base || coalesce(delta, '{}')) - 'costByModel' - '-'
    - coalesce(array(select jsonb_array_elements_text(delta -> '-')), '{}'::text[]) as top) t
$$;--> statement-breakpoint
CREATE FUNCTION trace_metrics_delta(m jsonb, base jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select nullif(
    coalesce((select jsonb_object_agg(k, v) from jsonb_each(m) e(k, v)
      where k <> 'costByModel' and (not base ? k or base -> k <> v)), '{}'::jsonb)
    || (select case when count(*) > 0 then jsonb_build_object('-', jsonb_agg(k order by k)) else '{}'::jsonb end from (
         select k from jsonb_object_keys(base) k where not m ? k
         union all select 'costByModel' where not m ? 'costByModel') gone)
    || case when m ? 'costByModel' and m -> 'costByModel' <> trace_metrics_by_model(m - 'costByModel')
         then jsonb_build_object('costByModel', m -> 'costByModel') else '{}'::jsonb end,
    '{}'::jsonb)
$$;
