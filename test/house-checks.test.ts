import { expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The test command checks the house rules too (issue 22): one format (Biome, biome.json), no lint
 * errors, and the types of the server code and of the web app. Fix with `npm run format` and read
 * `npm run lint` / `npm run typecheck`.
 */
const root = `${import.meta.dir}/..`;
const bin = (name: string) => `${root}/node_modules/.bin/${name}`;

function run(cmd: string[]): { code: number; out: string } {
  const p = Bun.spawnSync(cmd, { cwd: root, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  return { code: p.exitCode ?? 1, out: `${p.stdout.toString()}\n${p.stderr.toString()}`.slice(-6000) };
}

test("the tree is formatted and lint-clean (biome ci: npm run format fixes the format)", () => {
  const r = run([bin("biome"), "ci", "--colors=off", "--diagnostic-level=error", "."]);
  if (r.code !== 0) console.error(r.out);
  expect(r.code).toBe(0);
}, 120_000);

test("the server code and the web app typecheck (npm run typecheck)", () => {
  for (const project of [".", "web"]) {
    const r = run([process.execPath, "x", "tsc", "--noEmit", "-p", project]);
    if (r.code !== 0) console.error(r.out);
    expect({ project, code: r.code }).toEqual({ project, code: 0 });
  }
}, 120_000);

const cruiser = `${root}/node_modules/dependency-cruiser/bin/dependency-cruiser.mjs`;
const cruise = (cwd: string, paths: string[]) => {
  const p = Bun.spawnSync([process.execPath, cruiser, "--config", `${root}/.dependency-cruiser.cjs`, ...paths], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: p.exitCode ?? 1, out: `${p.stdout.toString()}\n${p.stderr.toString()}`.slice(-6000) };
};

test("no module imports itself back through others, type-only imports included (npm run cycles)", () => {
  const r = cruise(root, ["apps", "shared", "scripts", "web/src", "bench", "test"]);
  if (r.code !== 0) console.error(r.out);
  expect(r.code).toBe(0);
}, 120_000);

test("the cycle check sees a loop made only of type imports", async () => {
  const dir = await mkdtemp(join(tmpdir(), "cellar-cycle-"));
  try {
    await writeFile(join(dir, "tsconfig.json"), "{}");
    await writeFile(join(dir, "a.ts"), 'import type { B } from "./b.ts";\nexport type A = { b?: B };\n');
    await writeFile(join(dir, "b.ts"), 'import type { A } from "./a.ts";\nexport type B = { a?: A };\n');
    const r = cruise(dir, ["."]);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("no-circular");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);

/** Writes `files` (path -> source) under a scratch folder, cruises all of it, and cleans up. */
async function cruiseProbe(files: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = await mkdtemp(join(tmpdir(), "cellar-rules-"));
  try {
    await writeFile(join(dir, "tsconfig.json"), "{}");
    for (const [path, source] of Object.entries(files)) {
      await mkdir(join(dir, dirname(path)), { recursive: true });
      await writeFile(join(dir, path), source);
    }
    const roots = [...new Set(Object.keys(files).map((p) => p.split("/")[0]))];
    return cruise(dir, roots);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("the check refuses an app importing another app's code (apps-apart)", async () => {
  const r = await cruiseProbe({
    "apps/ingest/src/a.ts": 'import { b } from "../../processor/src/b.ts";\nexport const a = b;\n',
    "apps/processor/src/b.ts": "export const b = 1;\n",
  });
  expect(r.code).not.toBe(0);
  expect(r.out).toContain("apps-apart: apps/ingest/src/a.ts → apps/processor/src/b.ts");
}, 120_000);

test("the check refuses analysis that reaches I/O, directly or through another module (analysis-is-pure)", async () => {
  const r = await cruiseProbe({
    "apps/processor/src/analysis/direct.ts":
      'import { readFileSync } from "node:fs";\nexport const d = readFileSync;\n',
    "shared/analysis/through.ts": 'import { load } from "../store.ts";\nexport const t = load;\n',
    "shared/store.ts": 'import { connect } from "node:net";\nexport const load = connect;\n',
    "shared/analysis/pure.ts": "export const sum = (a: number, b: number) => a + b;\n",
  });
  expect(r.code).not.toBe(0);
  expect(r.out).toContain("analysis-is-pure: apps/processor/src/analysis/direct.ts → fs");
  expect(r.out).toContain("analysis-is-pure: shared/analysis/through.ts → net");
  expect(r.out).not.toContain("shared/analysis/pure.ts");
}, 120_000);

test("the check refuses a value import of server code in the dashboard, and lets types through (web-takes-types-only)", async () => {
  const server = "export const Iso = { format: 'date-time' };\n";
  const r = await cruiseProbe({
    "apps/platform/src/model.ts": server,
    "web/src/value.ts": 'import { Iso } from "../../apps/platform/src/model.ts";\nexport const v = Iso;\n',
    "web/src/types.ts": 'import type { Iso } from "../../apps/platform/src/model.ts";\nexport type T = typeof Iso;\n',
    "web/src/inline.ts": 'import { type Iso } from "../../apps/platform/src/model.ts";\nexport type I = typeof Iso;\n',
  });
  expect(r.code).not.toBe(0);
  expect(r.out).toContain("web-takes-types-only: web/src/value.ts → apps/platform/src/model.ts");
  expect(r.out).not.toContain("web/src/types.ts");
  expect(r.out).not.toContain("web/src/inline.ts");
}, 120_000);
