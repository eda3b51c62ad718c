import { createPriceBook, type ModelPrice } from "./table.ts";

/**
 * Checks of the price table (prices.json) that `npm run prices:check` prints and a test runs:
 * the shape of every entry, one entry per model and date, every model reachable under its own
 * name and its dated spellings (no entry hidden by the folding of shared/pricing/table.ts), and the entries whose
 * `checked` date is older than `maxAgeDays` (prices drift: re-read the source, then bump `checked`).
 * Pure: the table and today's date come in.
 */
export interface PriceTableReport {
  problems: string[];
  stale: Array<{ model: string; from: string; checked: string; ageDays: number; source: string }>;
  entries: number;
  models: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const REQUIRED_NUMBERS = ["input", "output", "contextWindow"] as const;
const NULLABLE_RATES = ["cachedInput", "cacheWrite", "reasoningOutput", "audioInput", "audioOutput"] as const;
const KNOWN_KEYS = new Set(["provider", "model", "from", "source", "checked", ...REQUIRED_NUMBERS, ...NULLABLE_RATES]);

const validDate = (s: unknown) =>
  typeof s === "string" && DATE.test(s) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s);

export function checkPriceTable(
  table: { version?: unknown; providers?: unknown; prices?: unknown },
  opts: { today: string; maxAgeDays: number },
): PriceTableReport {
  const problems: string[] = [];
  const stale: PriceTableReport["stale"] = [];
  if (!validDate(table.version))
    problems.push(`version must be a YYYY-MM-DD date, got ${JSON.stringify(table.version)}`);
  const providers = (table.providers ?? {}) as Record<string, unknown>;
  const prices = Array.isArray(table.prices) ? (table.prices as Array<Record<string, unknown>>) : [];
  if (!Array.isArray(table.prices)) problems.push("prices must be an array");
  const seen = new Set<string>();
  const todayMs = Date.parse(`${opts.today}T00:00:00Z`);
  prices.forEach((p, i) => {
    const at = `prices[${i}] (${String(p.model)})`;
    for (const key of Object.keys(p)) if (!KNOWN_KEYS.has(key)) problems.push(`${at}: unknown key ${key}`);
    if (typeof p.provider !== "string" || !(p.provider in providers))
      problems.push(`${at}: provider ${JSON.stringify(p.provider)} is not listed in providers`);
    if (typeof p.model !== "string" || p.model !== p.model.trim().toLowerCase() || !p.model)
      problems.push(`${at}: model must be a non-empty lower-case name`);
    for (const key of ["from", "checked"] as const)
      if (!validDate(p[key])) problems.push(`${at}: ${key} must be a YYYY-MM-DD date`);
    if (typeof p.source !== "string" || !/^https:\/\/[^\s/]+\.[^\s/]+\//.test(p.source))
      problems.push(`${at}: source must be the https URL of the provider's pricing page`);
    for (const key of REQUIRED_NUMBERS)
      if (typeof p[key] !== "number" || !Number.isFinite(p[key] as number) || (p[key] as number) <= 0)
        problems.push(`${at}: ${key} must be a positive number`);
    for (const key of NULLABLE_RATES)
      if (p[key] !== undefined && p[key] !== null && (typeof p[key] !== "number" || (p[key] as number) < 0))
        problems.push(`${at}: ${key} must be null or a non-negative number`);
    if (typeof p.cachedInput === "number" && typeof p.input === "number" && p.cachedInput > p.input)
      problems.push(`${at}: cachedInput above input`);
    const key = `${p.model}@${p.from}`;
    if (seen.has(key)) problems.push(`${at}: a second entry for ${key}`);
    seen.add(key);
    if (validDate(p.checked)) {
      const ageDays = Math.floor((todayMs - Date.parse(`${p.checked}T00:00:00Z`)) / 86_400_000);
      if (ageDays > opts.maxAgeDays)
        stale.push({
          model: String(p.model),
          from: String(p.from),
          checked: String(p.checked),
          ageDays,
          source: String(p.source),
        });
    }
  });
  // Reachability: every model resolves to itself, and a name ending in a bare revision word would
  // be folded past by its dated spellings (gpt-4o-audio-preview-2024-12-17 -> gpt-4o-audio).
  if (problems.length === 0) {
    const book = createPriceBook(prices as unknown as ModelPrice[]);
    for (const model of new Set(prices.map((p) => String(p.model)))) {
      const resolved = book.canonicalModel(model);
      if (resolved !== model) problems.push(`${model}: resolves to ${JSON.stringify(resolved)}, not to itself`);
      else if (/-(latest|preview|exp)$/.test(model))
        problems.push(
          `${model}: its dated spellings fold past "-${model.split("-").pop()}": name the entry without it`,
        );
    }
  }
  return { problems, stale, entries: prices.length, models: new Set(prices.map((p) => p.model)).size };
}
