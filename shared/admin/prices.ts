import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { tenantModelPrices, tenants } from "../db/schema/index.ts";
import { AdminError } from "../errors.ts";

/**
 * A tenant's own model prices (docs/otlp.md, "Prices"): a negotiated price for a known model, or a
 * custom model the built-in table does not know. Applies to sessions and traces that mature after
 * the change; costs already computed stay as they were.
 */
export interface PriceInput {
  tenantId: string;
  model: string;
  provider?: string;
  input: string;
  output: string;
  cachedInput?: string;
  cacheWrite?: string;
  contextWindow?: string;
  from?: string;
  source?: string;
}

function usdPerMillion(raw: string | undefined, flag: string, required: boolean): number | null {
  if (raw === undefined || raw === "") {
    if (required) throw new AdminError(`--${flag} is required (USD per million tokens)`);
    return null;
  }
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1_000_000)
    throw new AdminError(`--${flag} must be a number of USD per million tokens between 0 and 1000000`);
  return n;
}

function day(raw: string | undefined): string {
  if (raw === undefined) return "1970-01-01";
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(Date.parse(`${raw}T00:00:00Z`)))
    throw new AdminError("--from must be a date, YYYY-MM-DD");
  return raw;
}

async function requireTenant(db: Db, tenantId: string) {
  const [t] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId));
  if (!t) throw new AdminError(`no tenant ${tenantId}`);
}

export async function setPrice(db: Db, input: PriceInput) {
  const model = input.model?.trim().toLowerCase();
  if (!model || model.length > 256) throw new AdminError("--model must be a model name of at most 256 characters");
  const contextWindow = input.contextWindow === undefined ? null : Number(input.contextWindow);
  if (contextWindow !== null && (!Number.isInteger(contextWindow) || contextWindow <= 0))
    throw new AdminError("--context-window must be a positive whole number of tokens");
  await requireTenant(db, input.tenantId);
  const row = {
    tenantId: input.tenantId,
    model,
    fromDate: day(input.from),
    provider: (input.provider ?? "custom").trim().toLowerCase() || "custom",
    input: usdPerMillion(input.input, "input", true)!,
    output: usdPerMillion(input.output, "output", true)!,
    cachedInput: usdPerMillion(input.cachedInput, "cached-input", false),
    cacheWrite: usdPerMillion(input.cacheWrite, "cache-write", false),
    contextWindow,
    source: (input.source ?? "tenant override").slice(0, 500),
  };
  const { tenantId: _t, ...update } = row;
  const [saved] = await db
    .insert(tenantModelPrices)
    .values(row)
    .onConflictDoUpdate({
      target: [tenantModelPrices.tenantId, tenantModelPrices.model, tenantModelPrices.fromDate],
      set: update,
    })
    .returning();
  return saved;
}

export async function listPrices(db: Db, input: { tenantId: string }) {
  await requireTenant(db, input.tenantId);
  return db
    .select()
    .from(tenantModelPrices)
    .where(eq(tenantModelPrices.tenantId, input.tenantId))
    .orderBy(asc(tenantModelPrices.model), asc(tenantModelPrices.fromDate));
}

export async function deletePrice(db: Db, input: { tenantId: string; model: string; from?: string }) {
  const model = input.model?.trim().toLowerCase();
  if (!model) throw new AdminError("--model is required");
  const where =
    input.from === undefined
      ? and(eq(tenantModelPrices.tenantId, input.tenantId), eq(tenantModelPrices.model, model))
      : and(
          eq(tenantModelPrices.tenantId, input.tenantId),
          eq(tenantModelPrices.model, model),
          eq(tenantModelPrices.fromDate, day(input.from)),
        );
  const deleted = await db
    .delete(tenantModelPrices)
    .where(where)
    .returning({ model: tenantModelPrices.model, from: tenantModelPrices.fromDate });
  if (!deleted.length) throw new AdminError(`no price for model ${JSON.stringify(model)} in this tenant`);
  return { deleted };
}
