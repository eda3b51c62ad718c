import overrides from "./overrides.json" with { type: "json" };
import { costLines, type CostLine, type PriceRecord, roundUsd, type TokenUsage } from "./lines.ts";
import { matchSource, SOURCE_NAME, SOURCE_VERSION, sourceProviderId } from "./source.ts";

export { type CostLine, roundUsd, type TokenUsage } from "./lines.ts";

/**
 * Model prices: the maintained database's (shared/pricing/source.ts) plus what Cellar adds, a
 * tenant's own entries (admin CLI `price set`, shared/pricing/tenant.ts) and the documented
 * service-tier factors and derived rates of overrides.json. A call is matched by its exact model id within its
 * provider, then by the database's own documented aliases and match rules, then by the model id
 * across providers; a model nothing matches is unpriced, with the reason (never a guess).
 *
 * Usage is priced in one shape, OpenAI's: prompt tokens include cache reads and cache writes
 * (providers whose native count excludes them, Anthropic and Claude on Bedrock, are normalised at
 * ingestion: shared/otlp/usage.ts).
 */
export const PRICE_TABLE_VERSION = `${SOURCE_NAME}@${SOURCE_VERSION}+cellar-${overrides.version}`;
/** The day the database's pinned version was published: the date of its prices. */
export const SOURCE_DATE = "2026-09-23";

/** A tenant's own price entry (tenant_model_prices). USD per million tokens. */
export interface ModelPrice {
  provider: string;
  model: string;
  /** ISO date from which this price applies. */
  from: string;
  input: number;
  /** Cache reads; null = no discount (billed as input). */
  cachedInput: number | null;
  /** Cache writes; null = billed as input. */
  cacheWrite: number | null;
  output: number;
  /** Context window in tokens, null when unknown. */
  contextWindow: number | null;
  source: string;
  checked: string;
}

/** Where a call's price came from, carried on every breakdown. */
export interface PriceEntryRef {
  /** `provider/model` of the entry: the database's ids, or `tenant/<model>`. */
  id: string;
  /** `@pydantic/genai-prices@0.1.8`, or the tenant entry's own source text. */
  source: string;
  /** The pricing page the entry cites, when known. */
  url: string | null;
  /** Date of the prices: the database version's publication, or the tenant entry's `from`. */
  date: string;
}

export interface CallContext {
  /** Cellar's provider id (gen_ai.provider.name), when known. */
  provider?: string | null;
  /** The service tier the response (else the request) says was used: OpenAI's `service_tier`. */
  serviceTier?: string | null;
}

export interface Quote {
  /** USD, null when unpriced (then `reason` says why). */
  costUsd: number | null;
  reason: string | null;
  entry: PriceEntryRef | null;
  /** The non-standard service tier applied, e.g. `flex (x0.5)`; null for the standard tier. */
  serviceTier: string | null;
  lines: CostLine[];
}

interface Resolved {
  name: string;
  provider: string;
  price: PriceRecord;
  contextWindow: number | null;
  entry: PriceEntryRef;
  /** The 1-hour cache-write rate comes from overrides.json, not the database. */
  derived1h?: boolean;
}

export interface PriceBook {
  /** The price entry's model id a model string resolves to, or null when nothing prices it. */
  canonicalModel(model: string | null | undefined, provider?: string | null): string | null;
  /** Base prices of a model at a time (default now), or null when unknown. */
  priceFor(model: string | null | undefined, at?: Date, provider?: string | null): ModelPrice | null;
  /** Cost in USD of one call, or null when unpriced. */
  costOf(model: string | null | undefined, usage: TokenUsage, at?: Date, ctx?: CallContext): number | null;
  /** Cost of one call with its lines, entry and (when unpriced) the reason. */
  quote(model: string | null | undefined, usage: TokenUsage, at?: Date, ctx?: CallContext): Quote;
}

const STANDARD_TIERS = new Set(overrides.standardTiers);

const DATED_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/;
const REVISION_SUFFIX = /-\d{3}$/;

function undecorated(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/^.*\/models\//, "")
    .replace(/^(openai|anthropic|google|mistralai|mistral)\//, "")
    .replace(/^(us|eu|apac|global|us-gov|jp|au|ca)\.(?=[a-z0-9]+\.)/, "")
    .replace(/^(anthropic|mistral|google|amazon|meta|cohere|ai21)\./, "")
    .replace(/-v\d+(:\d+)?$/, "")
    .replace(/@.*$/, "");
}

/**
 * overrides.json `cacheWrite1h`: a 1-hour cache-write rate the database lacks (Claude on Bedrock),
 * as a factor of the entry's own input rate, long-context tiers included. An entry with its own
 * 1-hour rate keeps it.
 */
function withDerivedRates(
  provider: string,
  modelId: string,
  price: PriceRecord,
): { price: PriceRecord; derived: boolean } {
  const input = price.input_mtok;
  if (price.cache_write_1h_mtok !== undefined || input === undefined) return { price, derived: false };
  const id = modelId.toLowerCase();
  const rule = overrides.cacheWrite1h.find((r) => r.provider === provider && id.includes(r.modelContains));
  if (!rule) return { price, derived: false };
  const f = rule.inputFactor;
  const rate =
    typeof input === "number"
      ? input * f
      : { base: input.base * f, tiers: input.tiers.map((t) => ({ start: t.start, price: t.price * f })) };
  return { price: { ...price, cache_write_1h_mtok: rate }, derived: true };
}

function tenantPrice(e: ModelPrice): PriceRecord {
  return {
    input_mtok: e.input,
    output_mtok: e.output,
    ...(e.cachedInput != null ? { cache_read_mtok: e.cachedInput } : {}),
    ...(e.cacheWrite != null ? { cache_write_mtok: e.cacheWrite } : {}),
  };
}

/**
 * The database plus a tenant's own entries. A model the tenant priced (by the call's model id, or
 * by the database entry it resolves to) is priced by the tenant's entries only, dated among
 * themselves: a negotiated price or a custom model replaces the public one rather than mixing.
 */
export function createPriceBook(own: readonly ModelPrice[] = []): PriceBook {
  const ownByModel = new Map<string, ModelPrice[]>();
  for (const e of own) {
    const list = ownByModel.get(e.model) ?? [];
    list.push(e);
    list.sort((a, b) => a.from.localeCompare(b.from));
    ownByModel.set(e.model, list);
  }
  const ownAt = (name: string, at: Date): Resolved | null => {
    const list = ownByModel.get(name);
    if (!list) return null;
    const day = at.toISOString().slice(0, 10);
    let chosen = list[0];
    for (const e of list) if (e.from <= day) chosen = e;
    return {
      name,
      provider: chosen.provider,
      price: tenantPrice(chosen),
      contextWindow: chosen.contextWindow,
      entry: { id: `tenant/${name}`, source: chosen.source, url: null, date: chosen.from },
    };
  };
  // Matching scans the database's rules: remembered per model, provider and minute (prices can
  // change by date, and DeepSeek's by time of day).
  const matched = new Map<string, ReturnType<typeof matchSource>>();
  const match = (raw: string, provider: string | null | undefined, at: Date) => {
    const key = `${provider ?? ""}\u0000${raw}\u0000${Math.floor(at.getTime() / 60_000)}`;
    let m = matched.get(key);
    if (m === undefined) {
      if (matched.size > 10_000) matched.clear();
      matched.set(key, (m = matchSource(raw, provider, at)));
    }
    return m;
  };
  const resolve = (model: string | null | undefined, at: Date, provider?: string | null): Resolved | null => {
    if (!model) return null;
    const raw = model.trim().toLowerCase();
    const mine = ownAt(raw, at);
    if (mine) return mine;
    const m = match(raw, provider, at);
    if (!m) return null;
    const own = ownAt(m.modelId, at);
    if (own) return own;
    const { price, derived } = withDerivedRates(m.provider, m.modelId, m.prices as PriceRecord);
    return {
      name: m.modelId,
      provider: m.provider,
      price,
      contextWindow: m.contextWindow,
      entry: {
        id: `${m.provider}/${m.modelId}`,
        source: `${SOURCE_NAME}@${SOURCE_VERSION}`,
        url: m.url,
        date: SOURCE_DATE,
      },
      derived1h: derived,
    };
  };
  /**
   * The name a priced model is shown and grouped under (cost by model, norms): the call's id
   * without its provider's decorations (`openai/`, Bedrock's `us.amazon.` and `-v1:0`, Vertex's
   * `@date`, `-latest`), then without dated or revision suffixes only while the shorter name still
   * resolves to the same price entry (`gpt-4o-2024-05-13` stays itself, `gpt-4o-2024-08-06` is
   * `gpt-4o`). Null when nothing prices the model.
   */
  const canonicalModel = (model: string | null | undefined, provider?: string | null) => {
    const at = new Date();
    const r = resolve(model, at, provider);
    if (!r || !model) return null;
    if (r.entry.id.startsWith("tenant/")) return r.name;
    // `-latest` is an alias of the family's current version: the label drops it.
    let name = undecorated(model).replace(/-latest$/, "");
    for (let i = 0; i < 3; i++) {
      const shorter = name.replace(DATED_SUFFIX, "").replace(REVISION_SUFFIX, "");
      if (shorter === name || resolve(shorter, at, provider ?? r.provider)?.entry.id !== r.entry.id) break;
      name = shorter;
    }
    return name;
  };
  const priceFor = (model: string | null | undefined, at: Date = new Date(), provider?: string | null) => {
    const r = resolve(model, at, provider);
    if (!r) return null;
    const base = (k: string) => {
      const p = r.price[k];
      return p === undefined ? null : typeof p === "number" ? p : p.base;
    };
    return {
      provider: r.provider,
      model: r.name,
      from: r.entry.date,
      input: base("input_mtok") ?? 0,
      cachedInput: base("cache_read_mtok"),
      cacheWrite: base("cache_write_mtok"),
      output: base("output_mtok") ?? 0,
      contextWindow: r.contextWindow,
      source: r.entry.url ?? r.entry.source,
      checked: r.entry.date,
    } satisfies ModelPrice;
  };
  const quote = (model: string | null | undefined, usage: TokenUsage, at: Date = new Date(), ctx: CallContext = {}) => {
    const unpriced = (reason: string, entry: PriceEntryRef | null = null): Quote => ({
      costUsd: null,
      reason,
      entry,
      serviceTier: null,
      lines: [],
    });
    if (!model) return unpriced("no model named on the call");
    const r = resolve(model, at, ctx.provider);
    if (!r)
      return unpriced(
        `unknown model ${JSON.stringify(model)}${ctx.provider ? ` (provider ${ctx.provider})` : ""}: no price entry matches it`,
      );
    let factor = 1;
    let serviceTier: string | null = null;
    const tier = ctx.serviceTier?.trim().toLowerCase();
    if (tier && !STANDARD_TIERS.has(tier)) {
      const providerId = sourceProviderId(ctx.provider) ?? r.provider;
      const rule = overrides.serviceTiers.find((t) => t.tier === tier && t.provider === providerId);
      // A tier whose factor differs by model (OpenAI priority): the model's own factor, if listed.
      const perModel = (
        overrides.modelServiceTiers as Array<{ provider: string; tier: string; factors: Record<string, number> }>
      ).find((t) => t.tier === tier && t.provider === r.provider)?.factors[r.name];
      const f = rule?.factor ?? (r.entry.id.startsWith("tenant/") ? undefined : perModel);
      if (f === undefined)
        return unpriced(`service tier ${JSON.stringify(tier)}: no price for it (${r.entry.id})`, r.entry);
      factor = f;
      serviceTier = `${tier} (x${Number(f.toFixed(3))})`;
    }
    const { lines, unpriced: why } = costLines(r.price, usage, factor);
    if (why) return unpriced(`${why} (${r.entry.id})`, r.entry);
    // A line priced at a rate overrides.json derived says so in the entry it cites.
    const derivedLine = r.derived1h && lines.some((l) => l.kind === "cache_write_1h");
    return {
      costUsd: roundUsd(lines.reduce((n, l) => n + l.usd, 0)),
      reason: null,
      entry: derivedLine
        ? { ...r.entry, source: `${r.entry.source} (1-hour cache-write rate: Cellar's overrides.json)` }
        : r.entry,
      serviceTier,
      lines,
    };
  };
  const costOf = (model: string | null | undefined, usage: TokenUsage, at?: Date, ctx?: CallContext) =>
    quote(model, usage, at, ctx).costUsd;
  return { canonicalModel, priceFor, costOf, quote };
}

/** The database alone. */
export const DEFAULT_PRICE_BOOK = createPriceBook();
export const canonicalModel = DEFAULT_PRICE_BOOK.canonicalModel;
export const priceFor = DEFAULT_PRICE_BOOK.priceFor;
export const costOf = DEFAULT_PRICE_BOOK.costOf;
