import type postgres from "postgres";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { type TraceCost as TraceCostOf, traceCost } from "@cellar/shared/pricing/breakdown";
import { roundUsd } from "@cellar/shared/pricing/table";
import { loadPriceBooks } from "@cellar/shared/pricing/tenant";
import { isoNN } from "../../http/schemas.ts";
import type { SessionRow } from "./row.ts";
import { listPage, type Page } from "./telemetry.ts";

/**
 * A session's cost broken down call by call (docs/pricing.md, "Cost breakdown"; issue 40): its
 * traces in start order, a page at a time, each priced as the trace read prices it (the stored
 * payload, the tenant's price book at read time: shared/pricing/breakdown.ts `traceCost`), and the
 * page's totals as the sums of those lines. Only what pricing reads leaves Postgres for a trace
 * stored as jsonb (the request's model and tier, the responses, the OTLP attributes); a deflated
 * payload is inflated whole, as every payload read does. Its query and answer schemas are in
 * sessions/model.ts.
 */

/** Over `traces tr`: what `traceCost` reads, and no more of an older row's jsonb payload. */
const COST_COLUMNS = `tr.trace_id, tr.provider, tr.start_time, tr.end_time,
  (select z.payload_z from trace_payloads z where z.tenant_id = tr.tenant_id and z.trace_pk = tr.id) as payload_z,
  jsonb_build_object('model', tr.payload->'request'->'model', 'service_tier', tr.payload->'request'->'service_tier') as request,
  tr.payload->'responses' as responses, tr.payload->'otel' as otel`;

interface Ctx {
  sql: postgres.Sql | postgres.TransactionSql;
  serviceName: string;
  session: SessionRow;
}

export async function sessionCostBreakdown(ctx: Ctx, tenantId: string, p: Page) {
  const book = (await loadPriceBooks(ctx.sql, [tenantId]))(tenantId);
  const { items, ...rest } = await listPage(
    ctx,
    p,
    {
      name: "session-cost-breakdown",
      select: COST_COLUMNS,
      from: "from traces tr where tr.session_pk = $1",
      keys: ["tr.start_time", "tr.trace_id"],
    },
    (r) => {
      const payload = r.payload_z
        ? decodePayload(r)
        : { request: r.request, responses: r.responses, ...(r.otel ? { otel: r.otel } : {}) };
      const cost = traceCost(book, { ...payload, provider: r.provider }, new Date(r.start_time), new Date(r.end_time));
      return { traceId: r.trace_id as string, startTime: isoNN(r.start_time), cost };
    },
  );
  return { ...rest, currency: "USD" as const, ...pageTotals(items.map((i) => i.cost)), traces: items };
}

/** The page's totals: sums of the calls' costs, each the sum of its lines. */
export function pageTotals(costs: TraceCostOf[]) {
  let priced = 0;
  let calls = 0;
  let unpricedCalls = 0;
  for (const c of costs) {
    calls += c.calls.length;
    unpricedCalls += c.unpricedCalls;
    for (const call of c.calls) priced += call.costUsd ?? 0;
  }
  const pricedUsd = roundUsd(priced);
  return { totalUsd: unpricedCalls ? null : pricedUsd, pricedUsd, calls, unpricedCalls };
}
