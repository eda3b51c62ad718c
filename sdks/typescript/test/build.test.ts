import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BROWSER_BUDGET_BYTES, build } from "../scripts/build.ts";

const root = join(import.meta.dir, "..");

test("the build makes ESM + .d.ts per entry point and a browser core within 8 KB gzipped; npm pack makes the tarball", async () => {
  const { browserGzipBytes } = await build();
  console.log(`browser build of the core: ${browserGzipBytes} bytes gzipped (budget ${BROWSER_BUDGET_BYTES})`);
  expect(browserGzipBytes).toBeLessThanOrEqual(BROWSER_BUDGET_BYTES);
  for (const entry of ["index", "openai", "anthropic", "otel"]) {
    expect(existsSync(join(root, "dist", `${entry}.js`))).toBe(true);
    expect(existsSync(join(root, "dist", `${entry}.d.ts`))).toBe(true);
  }
  const out = mkdtempSync(join(tmpdir(), "cellar-sdk-pack-"));
  try {
    const pack = spawnSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: root, encoding: "utf8" });
    expect(pack.status).toBe(0);
    // prepack (the build again) prints before pack's JSON.
    const [info] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m)));
    expect(info.name).toBe("cellar-sdk");
    const files = info.files.map((f: { path: string }) => f.path);
    expect(files).toEqual(
      expect.arrayContaining([
        "dist/index.js",
        "dist/index.d.ts",
        "dist/browser/cellar.min.js",
        "README.md",
        "CHANGELOG.md",
      ]),
    );
    expect(files.some((f: string) => f.startsWith("src/") || f.startsWith("test/"))).toBe(false);
    expect(existsSync(join(out, info.filename))).toBe(true);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 180_000);

test("the core imports nothing: no runtime dependencies", async () => {
  const bundle = await Bun.file(join(root, "dist/browser/cellar.min.js")).text();
  expect(bundle).not.toMatch(/\bfrom\s*["'][^./]/);
  const pkg = await Bun.file(join(root, "package.json")).json();
  expect(pkg.dependencies ?? {}).toEqual({});
});
