/**
 * Summarises a `.cpuprofile` (Bun's `--cpu-prof`, e.g. `BENCH_PROCESSOR_FLAGS="--cpu-prof
 * --cpu-prof-dir=DIR" bun run bench/pipeline.ts`, or `bench/ingest.ts --profile DIR`) per stage
 * of the pipeline: each sample goes to the deepest frame of its stack that names a stage below,
 * so a JSON.stringify inside the payload codec counts as "payload codec", one inside the
 * Postgres driver as "postgres driver". Counts samples, not the profile's time deltas (those
 * include the idle gaps between samples); at the default 1 ms interval a sample is ~1 ms of CPU.
 *
 *   bun run bench/profile-summary.ts FILE.cpuprofile [--top 25] [--per 5000]
 *     --per N   also print us per message, given the N messages the profiled run handled
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Stages, first match wins per frame; the deepest matching frame of a stack names its stage. */
const STAGES: Array<[string, RegExp]> = [
  ["decode: JSON.parse of the message", /^parse @ $|TextDecoder|^decode @ $/],
  [
    "decode: ingest rules (schema, storability, timestamps)",
    /shared\/(ingest-rules|json-limits|timestamps|validation)\.ts|@sinclair\/typebox|^check_|^Check/,
  ],
  ["decode: codec", /shared\/nats\/catalogue\.ts/],
  ["payload codec (deflate)", /shared\/db\/payload-codec\.ts|node:zlib|deflate/i],
  ["span derivation", /apps\/processor\/src\/ingest\/spans\.ts/],
  ["writer rows", /apps\/processor\/src\/ingest\/(writer|services|scores)\.ts/],
  ["analysis", /apps\/processor\/src\/analysis\//],
  ["maturation", /apps\/processor\/src\/(maturation|rollups|monitors)\/|shared\/maturation\//],
  ["postgres driver", /node_modules\/postgres\//],
  ["nats client", /node_modules\/@nats-io\//],
  ["consume runtime", /shared\/nats\/consume\//],
  [
    "ingest http + auth",
    /apps\/ingest\/src\/(app|credentials|pipeline|raw|batch)\.ts|node_modules\/elysia|shared\/(http|rate-limit|auth)\//,
  ],
  ["ingest body read + strict parse", /apps\/ingest\/src\/body\.ts|shared\/read-capped\.ts/],
  ["ingest validate", /apps\/ingest\/src\/validate\.ts/],
  ["ingest publish (id, envelope)", /apps\/ingest\/src\/publish\.ts|shared\/nats\/publish\.ts|shared\/crypto\.ts/],
  ["runtime: sockets, streams, timers", /^node:|^internal:|bun:/],
];

const label = (f: Frame) =>
  `${f.functionName || "(anonymous)"} @ ${f.url.replace(/^file:\/\/.*?\/(node_modules|apps|shared)\//, "$1/")}`;

export function summarise(profile: Profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const stageFor = (id: number): string => {
    const known = stageOf.get(id);
    if (known) return known;
    const f = byId.get(id)!.callFrame;
    const text = `${f.functionName} @ ${f.url}`;
    let stage = STAGES.find(([, re]) => re.test(text))?.[0];
    if (!stage) {
      const up = parent.get(id);
      stage = up === undefined ? "other" : stageFor(up);
    }
    stageOf.set(id, stage);
    return stage;
  };
  const stages = new Map<string, number>();
  const self = new Map<string, number>();
  let total = 0;
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === "(idle)" || node.callFrame.functionName === "(program)") continue;
    total++;
    // A native leaf (url "") is named by the deepest JS frame above it when it matches no stage itself.
    const stage = stageFor(id);
    stages.set(stage, (stages.get(stage) ?? 0) + 1);
    const name = label(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + 1);
  }
  return { total, stages, self };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "25" }, per: { type: "string" } },
  });
  for (const file of positionals) {
    const { total, stages, self } = summarise(JSON.parse(readFileSync(file, "utf8")) as Profile);
    const per = values.per ? Number(values.per) : 0;
    console.log(`${file}: ${total} samples`);
    const line = (n: number, name: string) =>
      `  ${((100 * n) / total).toFixed(1).padStart(5)}%  ${String(n).padStart(6)}${per ? `  ${((n * 1000) / per).toFixed(1).padStart(7)} us/msg` : ""}  ${name}`;
    console.log(" by stage:");
    for (const [name, n] of [...stages].sort((a, b) => b[1] - a[1])) console.log(line(n, name));
    console.log(` top ${values.top} self:`);
    for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
      console.log(line(n, name));
  }
}
