import { date, doublePrecision, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { tenantId, ts } from "./columns.ts";

/**
 * A tenant's own model prices (admin CLI `price set`): negotiated prices and custom or fine-tuned
 * models. A model listed here is priced by these rows only (shared/pricing/table.ts). USD per
 * million tokens, like the price database (docs/pricing.md).
 */
export const tenantModelPrices = pgTable(
  "tenant_model_prices",
  {
    tenantId: tenantId(),
    /** Lower-case model name as calls report it (or its price-table name). */
    model: text("model").notNull(),
    fromDate: date("from_date", { mode: "string" }).notNull(),
    provider: text("provider").notNull(),
    input: doublePrecision("input").notNull(),
    cachedInput: doublePrecision("cached_input"),
    cacheWrite: doublePrecision("cache_write"),
    output: doublePrecision("output").notNull(),
    contextWindow: integer("context_window"),
    source: text("source").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.model, t.fromDate] })],
);
