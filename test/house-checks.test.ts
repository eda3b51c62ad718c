import { expect, test } from "bun:test";

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
});

test("the server code and the web app typecheck (npm run typecheck)", () => {
  for (const project of [".", "web"]) {
    const r = run([process.execPath, "x", "tsc", "--noEmit", "-p", project]);
    if (r.code !== 0) console.error(r.out);
    expect({ project, code: r.code }).toEqual({ project, code: 0 });
  }
}, 120_000);
