import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { DETECTOR_NAMES, DETECTORS, DEFAULT_DETECTOR_CONFIG } from "@cellar/shared/analysis/detector-config";
import { detectorFile, REGISTRY } from "../apps/processor/src/analysis/detectors-registry";
import { DETECTORS as SCORED } from "./corpus/replay";

// The detectors are declared once (shared/analysis/detector-config.ts); this checks that every
// declared detector is wired, scored by the corpus and documented, and nothing else is.
const docs = readFileSync(new URL("../docs/analysis.md", import.meta.url), "utf8");
/** The rows of the markdown table whose header starts with `header`, as trimmed cells. */
function table(header: string): string[][] {
  const lines = docs.split("\n");
  const at = lines.findIndex((l) => l.replace(/\s+/g, " ").startsWith(header));
  expect(at).toBeGreaterThan(-1);
  const rows: string[][] = [];
  for (let i = at + 2; i < lines.length && lines[i].startsWith("|"); i++)
    rows.push(
      lines[i]
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  return rows;
}

test("every declared detector is wired in the processor's registry", () => {
  expect(Object.keys(REGISTRY).sort()).toEqual([...DETECTOR_NAMES].sort());
  for (const name of DETECTOR_NAMES)
    expect({ name, create: typeof REGISTRY[name] }).toEqual({ name, create: "function" });
});

test("the detectors folder holds one file per declared detector and nothing else", () => {
  const dir = new URL("../apps/processor/src/analysis/detectors/", import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  expect(files.sort()).toEqual(DETECTOR_NAMES.map(detectorFile).sort());
});

test("the static index imports exactly the detector files present, each under its declared name", () => {
  const dir = new URL("../apps/processor/src/analysis/detectors/", import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  const index = readFileSync(new URL("../apps/processor/src/analysis/detectors-index.ts", import.meta.url), "utf8");
  // `import { create as x } from "./detectors/<file>";` and `<name>: x,` in the object.
  const imports = [...index.matchAll(/import \{ create as (\w+) \} from "\.\/detectors\/([\w-]+\.ts)";/g)];
  expect(imports.map((m) => m[2]).sort()).toEqual(files.sort());
  const wired = Object.fromEntries([...index.matchAll(/^\s+(\w+): (\w+),$/gm)].map((m) => [m[1], m[2]]));
  for (const [, local, file] of imports) {
    const name = Object.keys(wired).find((n) => wired[n] === local);
    expect({ file, name: name && detectorFile(name) }).toEqual({ file, name: file });
  }
  // No computed import left: the processor bundles into one file (docs/operations.md).
  const registry = readFileSync(
    new URL("../apps/processor/src/analysis/detectors-registry.ts", import.meta.url),
    "utf8",
  );
  expect(registry).not.toContain("import(");
});

test("every declared detector is scored by the corpus", () => {
  expect([...SCORED].sort()).toEqual([...DETECTOR_NAMES].sort());
});

test("the findings table of docs/analysis.md is the declarations: name, rule, severity, key", () => {
  const rows = table("| detector | rule (defaults)");
  expect(rows.map((r) => r[0])).toEqual(DETECTOR_NAMES.map((n) => `\`${n}\``));
  for (const name of DETECTOR_NAMES) {
    const row = rows.find((r) => r[0] === `\`${name}\``)!;
    const d = DETECTORS[name];
    expect({ name, rule: row[1], severity: row[2], key: row[3] }).toEqual({
      name,
      rule: d.rule,
      severity: d.severity,
      key: d.key,
    });
  }
});

test("the configuration table of docs/analysis.md lists every key with its default", () => {
  const rows = table("| detector | keys (default)");
  for (const name of DETECTOR_NAMES) {
    const row = rows.find((r) => r[0].split(", ").includes(`\`${name}\``));
    expect({ name, documented: row !== undefined }).toEqual({ name, documented: true });
    for (const [key, value] of Object.entries(DEFAULT_DETECTOR_CONFIG[name])) {
      const shown = key === "enabled" ? `\`${key}\`` : `\`${key}\` (${value})`;
      expect({ name, key, documented: row![1].includes(shown) }).toEqual({ name, key, documented: true });
    }
  }
});
