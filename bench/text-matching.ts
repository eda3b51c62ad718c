/**
 * `npm run bench:text`: what the language-independent matchers cost per MB of hostile and
 * ordinary text (apps/processor/src/analysis/injection.ts, refusal.ts), beside a floor measured in
 * the same run on the same text: `JSON.parse` of it as a string and one case-insensitive Unicode
 * regex pass (`/ignore/giu`), the least any matcher must do. The matchers are linear: the
 * ms-per-MB column stays flat as the size doubles. Then the injection detector's whole path for
 * tool outputs (an OTLP `execute_tool` event's result, as the processor feeds it: keyword
 * prefilter, then the scan) per output, on ordinary API answers with nothing to find, beside
 * `JSON.parse` of the same outputs (what any consumer of them does). Short (well under 60 s).
 *
 *   bun run bench/text-matching.ts [--mb 2]
 */
import { injectionInContent } from "../apps/processor/src/analysis/injection.ts";
import { isRefusal, REFUSAL_MAX_READ } from "../apps/processor/src/analysis/refusal.ts";
import { InjectionDetector } from "../apps/processor/src/analysis/injection-detector.ts";
import { DEFAULT_DETECTOR_CONFIG } from "@cellar/shared/analysis/detector-config";

const mbFlag = process.argv.indexOf("--mb");
const maxMb = mbFlag >= 0 ? Number(process.argv[mbFlag + 1]) : 2;

const fill = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
const time = (f: () => unknown, rounds = 3) => {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    f();
    best = Math.min(best, performance.now() - t);
  }
  return best;
};

const inputs: Array<[string, string]> = [
  ["prose", "Plain prose about shipping, returns and the weather in Oslo. "],
  ["near-miss overrides", "ignore ignore all of the previous "],
  ["unclosed quotes", "“unclosed quote "],
  ["quote lines", "> quoted line\n"],
  ["CJK near-miss", "忽略之前的"],
  ["Devanagari", "पिछले सभी निर्देशों को ध्यान से पढ़ें। "],
];
console.log(`text matching, best of 3, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`);
console.log("input                 MB   injection ms/MB   floor ms/MB (JSON.parse + 1 regex pass)");
for (const [name, unit] of inputs) {
  for (let mb = maxMb / 2; mb <= maxMb; mb *= 2) {
    const text = fill(unit, mb * 1_000_000);
    const json = JSON.stringify(text);
    const scan = time(() => injectionInContent(text, Number.MAX_SAFE_INTEGER));
    const floor = time(() => {
      JSON.parse(json);
      return [...text.matchAll(/ignore/giu)].length;
    });
    console.log(
      `${name.padEnd(20)} ${mb.toFixed(1).padStart(4)}   ${(scan / mb).toFixed(0).padStart(15)}   ${(floor / mb).toFixed(0).padStart(11)}`,
    );
  }
}
// Refusals: a reply past the read bound costs nothing; one at the bound, the worst case of the patterns.
const huge = fill("I'm sorry ", maxMb * 1_000_000);
const past = time(
  () =>
    isRefusal(
      { refusal: null, finishReason: "stop", textHead: huge.slice(0, REFUSAL_MAX_READ), textLength: huge.length },
      600,
    ),
  5,
);
const atBound = time(
  () =>
    isRefusal(
      { refusal: null, finishReason: "stop", textHead: huge.slice(0, REFUSAL_MAX_READ), textLength: REFUSAL_MAX_READ },
      REFUSAL_MAX_READ,
    ),
  5,
);
console.log(
  `refusal: ${maxMb} MB reply ${past.toFixed(2)} ms (dismissed on length); ${REFUSAL_MAX_READ}-character worst case ${atBound.toFixed(2)} ms`,
);

// Tool outputs: the prefilter skips most API answers; what passes it is scanned and found clean.
const outputs: Array<[string, string]> = [
  [
    "weather JSON",
    JSON.stringify({
      city: "Oslo",
      temp_c: 4.5,
      wind_ms: 7,
      hourly: Array.from({ length: 24 }, (_, h) => ({ h, t: h / 3 })),
    }),
  ],
  [
    "order rows",
    JSON.stringify(
      Array.from({ length: 40 }, (_, i) => ({
        id: 1000 + i,
        sku: `SKU-${i}`,
        qty: i % 5,
        price: 9.5,
        status: "shipped",
      })),
    ),
  ],
  [
    "search results (prose)",
    JSON.stringify(
      Array.from({ length: 10 }, (_, i) => ({
        title: `Result ${i}`,
        snippet: "If you want to return an item, you can start a return from your orders page within 30 days.",
      })),
    ),
  ],
];
const PER = 2_000;
console.log(`\ntool outputs through the injection detector (prefilter + scan), ${PER} outputs each, best of 3`);
console.log("output                   chars   detector us/output   floor us/output (JSON.parse)   ratio");
for (const [name, output] of outputs) {
  // Each output distinct ({"i":n,"r":...}), so neither side reads a cached parse.
  const texts = Array.from({ length: PER }, (_, i) => `{"i":${i},"r":${output}}`);
  const events = texts.map((text, i) => ({
    id: `e${i}`,
    name: "gen_ai.execute_tool",
    timestamp: new Date(0),
    severityNumber: null,
    attributes: { "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": `c${i}`, "gen_ai.tool.call.result": text },
    body: null,
    traceId: null,
  }));
  const scan = time(() => {
    const d = new InjectionDetector(DEFAULT_DETECTOR_CONFIG.prompt_injection);
    for (const e of events) d.addEvent(e);
    if (d.nextTurn([]).length) throw new Error(`${name}: a finding in a clean output`);
  });
  const floor = time(() => {
    for (const text of texts) JSON.parse(text);
  });
  console.log(
    `${name.padEnd(24)} ${String(output.length).padStart(5)}   ${((scan / PER) * 1000).toFixed(1).padStart(18)}   ${((floor / PER) * 1000).toFixed(1).padStart(28)}   ${(scan / floor).toFixed(1).padStart(5)}x`,
  );
}
