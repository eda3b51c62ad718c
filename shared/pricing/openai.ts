/**
 * The price table moved to data (prices.json, read by table.ts) and covers every provider; this
 * module keeps the old import path working for the analysis code.
 */
export {
  canonicalModel,
  costOf,
  priceFor,
  PRICE_TABLE_VERSION,
  roundUsd,
  type ModelPrice,
  type TokenUsage,
} from "./table.ts";
