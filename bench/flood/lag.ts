/**
 * An event-loop lag probe for one process of bench/flood (ingest): preloaded with
 * `FLOOD_INGEST_BUN_FLAGS="--preload ./bench/flood/lag.ts" FLOOD_LAG_FILE=<path>`, it appends
 * `epoch ms when the loop stopped,lag ms` for every 2 ms timer that fired more than 4 ms late.
 * Line the lines up with FLOOD_DETAIL's timelines: `bun bench/flood/lag-report.ts`.
 */
import { appendFileSync } from "node:fs";

const file = process.env.FLOOD_LAG_FILE;
if (file) {
  const lags: string[] = [];
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const lag = now - last - 2;
    last = now;
    if (lag > 4) lags.push(`${(Date.now() - lag).toFixed(0)},${lag.toFixed(1)}`);
  }, 2);
  setInterval(() => {
    if (lags.length) appendFileSync(file, `${lags.splice(0).join("\n")}\n`);
  }, 1000);
}
