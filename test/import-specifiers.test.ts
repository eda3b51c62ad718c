/**
 * The apps run on Bun and on Deno (test/deploy-deno.test.ts). Deno resolves a relative import
 * only when it names its file, unless an unstable flag ("sloppy imports") is set, so every
 * relative import in apps/ and shared/ names its `.ts` file; shared code is imported by package
 * name (`@cellar/shared/...`, conventions), never by climbing out of an app.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(["'])([^"']+)\1/gm;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules") return [];
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

test("every relative import in apps/ and shared/ names its file, and apps reach shared code by package name", () => {
  const offenders: string[] = [];
  for (const file of [...sources(join(ROOT, "apps")), ...sources(join(ROOT, "shared"))]) {
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const spec = m[2];
      if (!spec.startsWith(".")) continue;
      const where = `${relative(ROOT, file)}: ${spec}`;
      if (!/\.(ts|tsx|json)$/.test(spec)) offenders.push(`${where} (no extension)`);
      const target = relative(ROOT, resolve(file, "..", spec));
      if (relative(ROOT, file).startsWith("apps/") && target.startsWith("shared/"))
        offenders.push(`${where} (use @cellar/shared/...)`);
    }
  }
  expect(offenders).toEqual([]);
});
