/**
 * Lines bench/flood/lag.ts's ingest lags up with a run's FLOOD_DETAIL timelines, per door and
 * stage: the lags of 4 ms or more, the other tenant's answers over 10 ms, how many of those
 * overlap a lag, and where each lag of 6 ms or more fell after the flooder's latest admitted send.
 *
 *   bun bench/flood/lag-report.ts <FLOOD_DETAIL prefix> <FLOOD_LAG_FILE> <door>[,<door>...]
 */
import { readFileSync } from "node:fs";

type Detail = { timeline: Array<[number, number]>; admitted: Array<[number, number]> };
const [prefix, lagFile, doors] = process.argv.slice(2);
if (!prefix || !lagFile || !doors) throw new Error("usage: lag-report.ts <detail prefix> <lag file> <doors>");
const lags = readFileSync(lagFile, "utf8")
  .trim()
  .split("\n")
  .map((l) => l.split(",").map(Number) as [number, number]);

for (const door of doors.split(","))
  for (const stage of ["alone", "flood"]) {
    const d = JSON.parse(readFileSync(`${prefix}-${door}-${stage}.json`, "utf8")) as Detail;
    const t0 = Math.min(...d.timeline.map(([sent]) => sent));
    const t1 = Math.max(...d.timeline.map(([sent, ms]) => sent + ms));
    const inStage = lags.filter(([at]) => at >= t0 && at <= t1);
    const slow = d.timeline.filter(([, ms]) => ms > 10);
    const behind = slow.filter(([sent, ms]) => inStage.some(([at, l]) => at < sent + ms && at + l > sent));
    const total = inStage.reduce((s, [, l]) => s + l, 0);
    const worst = inStage
      .map(([, l]) => l)
      .sort((a, b) => b - a)
      .slice(0, 8)
      .map((l) => l.toFixed(0));
    console.log(
      `${door} ${stage}: ${inStage.length} lags >= 4 ms (${total.toFixed(0)} ms in all; worst ${worst.join(", ")}); ` +
        `V answers > 10 ms: ${slow.length}, ${behind.length} overlapping a lag, ${slow.filter(([s]) => s < t0 + 1000).length} in the first second`,
    );
    for (const [at, l] of inStage.filter(([, l]) => l >= 6)) {
      const prev = d.admitted.filter(([sent]) => sent <= at).sort((a, b) => b[0] - a[0])[0];
      const after = prev
        ? `${Math.round(at - prev[0])} ms after an admitted send (answered in ${prev[1] - prev[0]} ms)`
        : "";
      console.log(`  ${((at - t0) / 1000).toFixed(2)} s: ${l.toFixed(0)} ms ${after}`);
    }
  }
