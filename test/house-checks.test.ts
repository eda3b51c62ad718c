import { expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

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
