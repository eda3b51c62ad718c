import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
/** The Deno the runtime switch is tested with (the `deno` npm package carries the binary). */
export const DENO_VERSION = "2.9.6";
const CACHE = join(ROOT, ".cache/deno");

/**
 * DENO_BIN, else a Deno 2 on PATH, else the project cache; installs the `deno` npm package into
 * .cache/deno with npm when none is found (the binary comes from npm's @deno/<platform> package,
 * so nothing beyond the npm registry is needed).
 */
export function findDeno(): string {
  const cached = join(CACHE, "node_modules/.bin/deno");
  for (const bin of [process.env.DENO_BIN, which("deno"), cached].filter(Boolean) as string[]) {
    if (existsSync(bin) && /^deno 2\./m.test(version(bin))) return bin;
  }
  mkdirSync(CACHE, { recursive: true });
  if (!existsSync(join(CACHE, "package.json")))
    writeFileSync(join(CACHE, "package.json"), '{ "name": "cellar-deno-cache", "private": true }\n');
  console.error(`installing deno@${DENO_VERSION} from npm into .cache/deno`);
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", `deno@${DENO_VERSION}`], {
    cwd: CACHE,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (!/^deno 2\./m.test(version(cached)))
    throw new Error(`npm installed deno@${DENO_VERSION} but ${cached} does not run`);
  return cached;
}

function version(bin: string): string {
  try {
    return execFileSync(bin, ["--version"], { encoding: "utf8" });
  } catch {
    return "";
  }
}

function which(cmd: string): string | undefined {
  try {
    return execFileSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}
