import { SOURCE_PROVIDERS, sourceModels } from "./source.ts";

/**
 * Checks behind `npm run prices:check` (docs/pricing.md): the shape of overrides.json (each entry
 * with its source and date), and the price database flattened to `provider/model -> price key ->
 * USD per million` so that updating the dependency is reviewed as a diff of changed prices
 * (`--snapshot old.json` before the update, `--diff old.json` after). Pure but for reading the
 * bundled database.
 */
export type FlatPrices = Record<string, Record<string, string>>;

/** Every model's prices, each price as text (`3`, `3 | >200000: 6`, `[from 2026-03-13] 5`). */
export function flatPrices(): FlatPrices {
  const out: FlatPrices = {};
  for (const provider of SOURCE_PROVIDERS)
    for (const m of sourceModels(provider)) {
      const row: Record<string, string> = {};
      const periods = Array.isArray(m.prices) ? m.prices : [{ prices: m.prices }];
      for (const period of periods) {
        const c = (period as { constraint?: { type: string; start_date?: string } }).constraint;
        const when = c ? `[${c.type === "start_date" ? `from ${c.start_date}` : c.type}] ` : "";
        for (const [k, v] of Object.entries(period.prices)) {
          if (v === undefined) continue;
          const text =
            typeof v === "number" ? String(v) : `${v.base}${v.tiers.map((t) => ` | >${t.start}: ${t.price}`).join("")}`;
          row[k] = row[k] === undefined ? `${when}${text}` : `${row[k]}; ${when}${text}`;
        }
      }
      out[`${provider}/${m.id}`] = row;
    }
  return out;
}

/** The changed, added and removed prices between two flattened snapshots. */
export function diffPrices(before: FlatPrices, after: FlatPrices): string[] {
  const lines: string[] = [];
  for (const id of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const a = before[id];
    const b = after[id];
    if (!a) lines.push(`+ ${id}`);
    else if (!b) lines.push(`- ${id}`);
    else
      for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort())
        if (a[k] !== b[k]) lines.push(`~ ${id} ${k}: ${a[k] ?? "(none)"} -> ${b[k] ?? "(none)"}`);
  }
  return lines;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Problems in overrides.json: each service-tier factor and derived rate names its provider, source and date. */
export function checkOverrides(o: {
  version?: unknown;
  serviceTiers?: Array<Record<string, unknown>>;
  standardTiers?: unknown;
  cacheWrite1h?: Array<Record<string, unknown>>;
  modelServiceTiers?: Array<Record<string, unknown>>;
}): string[] {
  const problems: string[] = [];
  if (typeof o.version !== "string" || !DATE.test(o.version)) problems.push("version must be a YYYY-MM-DD date");
  if (!Array.isArray(o.standardTiers)) problems.push("standardTiers must be a list");
  const seen = new Set<string>();
  for (const [i, t] of (o.serviceTiers ?? []).entries()) {
    const at = `serviceTiers[${i}]`;
    if (typeof t.provider !== "string" || !SOURCE_PROVIDERS.includes(t.provider))
      problems.push(`${at}: provider must be one of the database's (${SOURCE_PROVIDERS.join(", ")})`);
    if (typeof t.tier !== "string" || !t.tier) problems.push(`${at}: tier is required`);
    if (typeof t.factor !== "number" || !(t.factor > 0)) problems.push(`${at}: factor must be a positive number`);
    if (typeof t.source !== "string" || !/https:\/\//.test(t.source)) problems.push(`${at}: source must cite a page`);
    if (typeof t.checked !== "string" || !DATE.test(t.checked))
      problems.push(`${at}: checked must be a YYYY-MM-DD date`);
    const key = `${t.provider}/${t.tier}`;
    if (seen.has(key)) problems.push(`${at}: a second factor for ${key}`);
    seen.add(key);
  }
  for (const [i, r] of (o.modelServiceTiers ?? []).entries()) {
    const at = `modelServiceTiers[${i}]`;
    if (typeof r.provider !== "string" || !SOURCE_PROVIDERS.includes(r.provider))
      problems.push(`${at}: provider must be one of the database's (${SOURCE_PROVIDERS.join(", ")})`);
    if (typeof r.tier !== "string" || !r.tier) problems.push(`${at}: tier is required`);
    const factors = r.factors as Record<string, unknown> | undefined;
    if (
      !factors ||
      typeof factors !== "object" ||
      Object.values(factors).some((f) => typeof f !== "number" || !(f > 0))
    )
      problems.push(`${at}: factors must map model ids to positive numbers`);
    if (typeof r.source !== "string" || !/https:\/\//.test(r.source)) problems.push(`${at}: source must cite a page`);
    if (typeof r.checked !== "string" || !DATE.test(r.checked))
      problems.push(`${at}: checked must be a YYYY-MM-DD date`);
  }
  for (const [i, r] of (o.cacheWrite1h ?? []).entries()) {
    const at = `cacheWrite1h[${i}]`;
    if (typeof r.provider !== "string" || !SOURCE_PROVIDERS.includes(r.provider))
      problems.push(`${at}: provider must be one of the database's (${SOURCE_PROVIDERS.join(", ")})`);
    if (typeof r.modelContains !== "string" || !r.modelContains) problems.push(`${at}: modelContains is required`);
    if (typeof r.inputFactor !== "number" || !(r.inputFactor > 0))
      problems.push(`${at}: inputFactor must be a positive number`);
    if (typeof r.source !== "string" || !/https:\/\//.test(r.source)) problems.push(`${at}: source must cite a page`);
    if (typeof r.checked !== "string" || !DATE.test(r.checked))
      problems.push(`${at}: checked must be a YYYY-MM-DD date`);
  }
  return problems;
}
