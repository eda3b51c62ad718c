/**
 * `npm run prices:check [-- --snapshot FILE] [--diff FILE]`: checks overrides.json's shape
 * (shared/pricing/check.ts) and prints the price database's size; `--snapshot FILE` writes every
 * model's prices to FILE, `--diff FILE` prints what changed since that snapshot. Updating prices is
 * `--snapshot before.json`, updating @pydantic/genai-prices, then `--diff before.json`, reviewed
 * with the dependency bump (docs/pricing.md). Exits 1 on a problem in overrides.json.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { checkOverrides, diffPrices, flatPrices } from "../shared/pricing/check.ts";
import overrides from "../shared/pricing/overrides.json" with { type: "json" };
import { PRICE_TABLE_VERSION } from "../shared/pricing/table.ts";

const { values } = parseArgs({ options: { snapshot: { type: "string" }, diff: { type: "string" } } });
const now = flatPrices();
console.log(`${PRICE_TABLE_VERSION}: ${Object.keys(now).length} models`);
const problems = checkOverrides(overrides);
for (const p of problems) console.log(`PROBLEM ${p}`);
if (values.snapshot) {
  writeFileSync(values.snapshot, `${JSON.stringify(now, null, 1)}\n`);
  console.log(`wrote ${values.snapshot}`);
}
if (values.diff) {
  const changes = diffPrices(JSON.parse(readFileSync(values.diff, "utf8")), now);
  for (const line of changes) console.log(line);
  console.log(`${changes.length} changes since ${values.diff}`);
}
process.exit(problems.length ? 1 : 0);
