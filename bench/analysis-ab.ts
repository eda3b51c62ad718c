/**
 * `bun run bench/analysis-ab.ts --before DIR`: the analysis and the payload encoding of this
 * checkout against another's (DIR: a checkout with its own node_modules, e.g. main), imported
 * side by side in one process and run in alternating rounds, so both see the same machine load
 * (on a shared machine, runs in turns differ more than the change). Checks first that both give
 * the same answers on the bench traces (one-trace sessions and sessions of ten), then prints the
 * median and the fastest round of each, in process CPU us per trace, beside a bare JSON.stringify
 * of the payload measured in the same rounds.
 *
 *   bun run bench/analysis-ab.ts --before ../main [--traces 1500] [--rounds 15]
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import * as after from "../apps/processor/src/analysis/session.ts";
import * as afterItems from "../apps/processor/src/analysis/transcript.ts";
import * as afterCodec from "../shared/db/payload-codec.ts";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    before: { type: "string" },
    traces: { type: "string", default: "1500" },
    rounds: { type: "string", default: "15" },
  },
});
if (!args.before) throw new Error("--before DIR: the checkout to compare with");
const dir = resolve(args.before);
const before = (await import(`${dir}/apps/processor/src/analysis/session.ts`)) as typeof after;
const beforeItems = (await import(`${dir}/apps/processor/src/analysis/transcript.ts`)) as typeof afterItems;
const beforeCodec = (await import(`${dir}/shared/db/payload-codec.ts`)) as typeof afterCodec;

const N = Number(args.traces);
const templates = makeTemplates(200);
const traces = Array.from({ length: N }, (_, i) => {
  const payload = JSON.parse(templates[i % templates.length].replace("__SESSION__", `ab-${i}`));
  return {
    traceId: `t${i}`,
    pk: `pk${i}`,
    startTime: new Date(payload.start_time),
    endTime: new Date(payload.end_time),
    payload,
  };
});

// The same answers first: every field of the analysis and the references persist stores.
const answer = (m: typeof after, items: typeof afterItems, group: typeof traces) => {
  const a = m.analyzeSession(group, []);
  return JSON.stringify([group.map((t) => m.analyzeTrace(t)), a, a.items.map((i) => items.referenceOf(i) ?? null)]);
};
let differences = 0;
for (let i = 0; i < Math.min(N, 400); i++) {
  const group = traces.slice(i, i + (i % 40 === 0 ? 10 : 1));
  if (answer(before, beforeItems, group) !== answer(after, afterItems, group)) differences++;
  if (beforeCodec.encodePayload(group[0].payload).compare(afterCodec.encodePayload(group[0].payload)) !== 0)
    differences++;
}
console.log(`answers compared on ${Math.min(N, 400)} traces: ${differences} differences`);
if (differences > 0) process.exit(1);

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
let sink = 0;
/** As maturation runs it without a summary model, as in bench/message-cost.ts. */
const analyse = (m: typeof after) => () => {
  for (const t of traces) {
    m.analyzeTrace(t);
    const a = new m.SessionAnalyzer({ condensedTranscript: false });
    a.addTrace(t);
    sink += a.finish().items.length;
  }
};
const encode = (codec: typeof afterCodec) => () => {
  for (const t of traces) sink += codec.encodePayload(t.payload).length;
};
const stages: Array<[string, () => void]> = [
  ["floor: JSON.stringify of the payload", () => traces.forEach((t) => (sink += JSON.stringify(t.payload).length))],
  ["analysis, before", analyse(before)],
  ["analysis, after", analyse(after)],
  ["encodePayload, before", encode(beforeCodec)],
  ["encodePayload, after", encode(afterCodec)],
];
const results = new Map<string, number[]>();
for (let round = 0; round < Number(args.rounds); round++) {
  for (const [name, run] of stages) {
    const c0 = cpuUs();
    run();
    results.set(name, [...(results.get(name) ?? []), (cpuUs() - c0) / N]);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const [name, xs] of results)
  console.log(
    `${name.padEnd(38)} median ${median(xs).toFixed(1).padStart(6)} us, fastest ${Math.min(...xs)
      .toFixed(1)
      .padStart(6)} us`,
  );
if (sink < 0) console.log(sink);
