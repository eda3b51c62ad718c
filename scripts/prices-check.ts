/**
 * `npm run prices:check [-- --max-age-days 180] [--today YYYY-MM-DD] [--strict]`: checks the price
 * table's shape (shared/pricing/check.ts) and lists the entries not checked against their source
 * for more than the given age. Exits 1 on a shape problem, and with --strict on a stale entry too.
 * docs/pricing.md says how to add or re-check an entry.
 */
import { parseArgs } from "node:util";
import table from "../shared/pricing/prices.json" with { type: "json" };
import { checkPriceTable } from "../shared/pricing/check.ts";

const { values } = parseArgs({
  options: {
    "max-age-days": { type: "string", default: "180" },
    today: { type: "string", default: new Date().toISOString().slice(0, 10) },
    strict: { type: "boolean", default: false },
  },
});
const maxAgeDays = Number(values["max-age-days"]);
if (!Number.isFinite(maxAgeDays) || maxAgeDays < 0) {
  console.error(`--max-age-days must be a non-negative number, got ${values["max-age-days"]}`);
  process.exit(2);
}
const report = checkPriceTable(table, { today: values.today!, maxAgeDays });
console.log(`price table ${table.version}: ${report.entries} entries, ${report.models} models`);
for (const p of report.problems) console.log(`PROBLEM ${p}`);
for (const s of report.stale)
  console.log(`STALE   ${s.model} (from ${s.from}) checked ${s.checked}, ${s.ageDays} days ago: re-read ${s.source}`);
console.log(
  `${report.problems.length} problems, ${report.stale.length} entries checked more than ${maxAgeDays} days ago`,
);
process.exit(report.problems.length > 0 || (values.strict && report.stale.length > 0) ? 1 : 0);
