/**
 * `npm run release [OUT_DIR]`: the SDKs' release files from this checkout (after the root
 * `npm ci`), into OUT_DIR (default `dist/release/`):
 * - `cellar-sdk-<version>.tgz`: the TypeScript SDK, `npm pack` in sdks/typescript (its `prepack`
 *   builds dist/ with the build tools the package declares as dev dependencies);
 * - `cellar_sdk-<version>-py3-none-any.whl` and `cellar_sdk-<version>.tar.gz`: the Python SDK, by
 *   its in-tree build backend (the standard library alone);
 * - each SDK's CHANGELOG beside its files, and SHA256SUMS.
 * `--check` then installs each into a fresh project / virtual environment with no package index
 * and imports it (what test/sdk-packages.test.ts does on every CI run, plus a send to the apps).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..");
export const TS_SDK = join(ROOT, "sdks/typescript");
export const PY_SDK = join(ROOT, "sdks/python");

export interface ReleaseFiles {
  tarball: string;
  wheel: string;
  sdist: string;
  version: { typescript: string; python: string };
}

function sh(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The Python to build and test with: Debian's (python3 + python3-venv), else the PATH's. */
export function systemPython(): string {
  for (const candidate of ["/usr/bin/python3", "python3"]) {
    const r = spawnSync(candidate, ["-c", "import venv, ensurepip"], { encoding: "utf8" });
    if (r.status === 0) return candidate;
  }
  throw new Error("python3 with venv and ensurepip is needed (Debian: apt-get install python3 python3-venv)");
}

export function buildRelease(out = join(ROOT, "dist/release")): ReleaseFiles {
  mkdirSync(out, { recursive: true });
  // npm pack runs prepack (the build), whose lines come before pack's JSON on stdout.
  const packOut = sh("npm", ["pack", "--json", "--pack-destination", out], { cwd: TS_SDK });
  const [packed] = JSON.parse(packOut.slice(packOut.search(/^\[/m)));
  const python = systemPython();
  const [wheel, sdist] = sh(python, [join(PY_SDK, "backend/cellar_build.py"), out])
    .trim()
    .split("\n");
  const tsVersion: string = packed.version;
  const pyVersion = basename(wheel).split("-")[1];
  copyFileSync(join(TS_SDK, "CHANGELOG.md"), join(out, `cellar-sdk-${tsVersion}.typescript.CHANGELOG.md`));
  copyFileSync(join(PY_SDK, "CHANGELOG.md"), join(out, `cellar_sdk-${pyVersion}.python.CHANGELOG.md`));
  const files = { tarball: join(out, packed.filename), wheel, sdist };
  const sums = Object.values(files).map(
    (f) => `${createHash("sha256").update(readFileSync(f)).digest("hex")}  ${basename(f)}`,
  );
  writeFileSync(join(out, "SHA256SUMS"), `${sums.join("\n")}\n`);
  return { ...files, version: { typescript: tsVersion, python: pyVersion } };
}

/** A fresh npm project with the tarball installed, no registry involved (the SDK has no dependencies). */
export function installTarball(tarball: string, dir = mkdtempSync(join(tmpdir(), "cellar-sdk-install-"))): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "smoke", private: true, type: "module" }));
  sh("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], { cwd: dir });
  return dir;
}

/** A fresh virtual environment (`python -m venv`, its own pip) with `target` installed offline. */
export function installPython(target: string, dir = mkdtempSync(join(tmpdir(), "cellar-sdk-venv-"))): string {
  sh(systemPython(), ["-m", "venv", dir]);
  const pip = join(dir, "bin/pip");
  sh(pip, ["install", "--no-index", "--disable-pip-version-check", "--no-cache-dir", target], {
    env: { ...process.env, PIP_NO_INDEX: "1" },
  });
  return join(dir, "bin/python");
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const out = resolve(args.find((a) => !a.startsWith("--")) ?? join(ROOT, "dist/release"));
  const files = buildRelease(out);
  for (const f of [files.tarball, files.wheel, files.sdist]) console.log(f);
  if (args.includes("--check")) {
    const project = installTarball(files.tarball);
    const imports = `import { Cellar } from "cellar-sdk"; import { observeOpenAI } from "cellar-sdk/openai"; console.log(typeof Cellar, typeof observeOpenAI);`;
    console.log("node:", sh("node", ["--input-type=module", "-e", imports], { cwd: project }).trim());
    console.log("bun:", sh(process.execPath, ["-e", imports], { cwd: project }).trim());
    rmSync(project, { recursive: true, force: true });
    for (const target of [files.wheel, files.sdist]) {
      const py = installPython(target);
      const v = sh(py, ["-c", "import cellar_sdk; print(cellar_sdk.__version__)"], { cwd: tmpdir() }).trim();
      console.log(`python (${basename(target)}): cellar_sdk ${v}`);
      rmSync(resolve(py, "../.."), { recursive: true, force: true });
    }
  }
}
