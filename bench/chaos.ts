/**
 * `npm run bench:chaos`: the chaos run with a ledger (issue 12, docs/reliability.md). A 3-node
 * NATS cluster, Postgres and two instances of every app as real processes on loopback; steady
 * load from several tenants; every fault of the schedule one after another; then every
 * acknowledged item, maturation and webhook checked. Prints one table; exits 1 on any loss,
 * duplicate, missing webhook or bad signature.
 *
 *   bun run bench/chaos.ts [--short] [--rate N] [--keep]
 */
import { fullSchedule, runChaos, shortSchedule } from "./chaos/run";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const short = args.includes("--short");
const instances = 2;
const started = Date.now();
const result = await runChaos({
  schedule: short ? shortSchedule() : fullSchedule(instances),
  instances,
  tracesPerSecond: Number(flag("--rate") ?? (short ? 40 : 60)),
  steadyMs: short ? 8_000 : 10_000,
  keepDir: args.includes("--keep"),
});
console.log(
  `\nchaos run ${short ? "(short) " : ""}${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${((Date.now() - started) / 1000).toFixed(0)} s, ${instances} instances of each app, 3-node NATS (replicas 3)\n`,
);
console.log(result.table);
if (result.examples.length) console.log(`\nexamples:\n  ${result.examples.join("\n  ")}`);
console.log(`\nclient gave up on ${result.unacked} items (never acknowledged, not counted)`);
console.log(result.ok ? "\nPASS: nothing lost, nothing duplicated, every webhook delivered and signed" : "\nFAIL");
process.exit(result.ok ? 0 : 1);
