import type postgres from "postgres";
import { createPriceBook, DEFAULT_PRICE_BOOK, type ModelPrice, type PriceBook } from "./table.ts";

type Row = {
  tenant_id: string;
  model: string;
  from_date: string;
  provider: string;
  input: number;
  cached_input: number | null;
  cache_write: number | null;
  output: number;
  context_window: number | null;
  source: string;
  created_at: Date;
};

/** One price book per tenant: the built-in table plus the tenant's own rows (one query for all). */
export async function loadPriceBooks(
  sql: postgres.Sql | postgres.TransactionSql,
  tenantIds: string[],
): Promise<(tenantId: string) => PriceBook> {
  const ids = [...new Set(tenantIds)];
  if (ids.length === 0) return priceBooksOf([]);
  return priceBooksOf(await selectPrices(sql, sql`tenant_id = any(${sql.array(ids)}::uuid[])`));
}

/** The tenants' own price rows, as both loaders read them. */
function selectPrices(sql: postgres.Sql | postgres.TransactionSql, tenants: postgres.PendingQuery<postgres.Row[]>) {
  return sql<Row[]>`
    select tenant_id, model, from_date::text as from_date, provider, input, cached_input, cache_write, output, context_window, source, created_at
    from tenant_model_prices where ${tenants}`;
}

/**
 * The price books of the tenants owning these traces, without knowing the tenants first: one
 * statement that can go out beside the read of the traces themselves (one round trip).
 */
export async function loadPriceBooksOfTraces(
  sql: postgres.Sql | postgres.TransactionSql,
  tracePks: string[],
): Promise<(tenantId: string) => PriceBook> {
  if (tracePks.length === 0) return priceBooksOf([]);
  return priceBooksOf(
    await selectPrices(
      sql,
      sql`tenant_id in (select distinct tenant_id from traces where id = any(${sql.array(tracePks)}::uuid[]))`,
    ),
  );
}

function priceBooksOf(rows: Row[]): (tenantId: string) => PriceBook {
  const own = new Map<string, ModelPrice[]>();
  for (const r of rows) {
    const list = own.get(r.tenant_id) ?? [];
    list.push({
      provider: r.provider,
      model: r.model,
      from: r.from_date,
      input: r.input,
      cachedInput: r.cached_input,
      cacheWrite: r.cache_write,
      output: r.output,
      // Without a window the context-window detector never fires for this model.
      contextWindow: r.context_window ?? Number.MAX_SAFE_INTEGER,
      source: r.source,
      checked: new Date(r.created_at).toISOString().slice(0, 10),
    });
    own.set(r.tenant_id, list);
  }
  const books = new Map([...own].map(([tenant, list]) => [tenant, createPriceBook(list)]));
  return (tenantId) => books.get(tenantId) ?? DEFAULT_PRICE_BOOK;
}
