/**
 * Builds the package into dist/: ESM per entry point (Bun's bundler, the OpenTelemetry peers left
 * external), .d.ts by tsc, and the browser build of the core (dist/browser/cellar.min.js, one
 * minified ESM file) whose gzipped size is printed and held to 8 KB. `npm pack` then makes the
 * tarball.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, spawnSync } from "bun";

const root = join(import.meta.dir, "..");
const dist = join(root, "dist");
export const BROWSER_BUDGET_BYTES = 8 * 1024;

export async function build(): Promise<{ browserGzipBytes: number }> {
  rmSync(dist, { recursive: true, force: true });
  const entries = ["index", "openai", "anthropic", "otel"].map((e) => join(root, "src", `${e}.ts`));
  const lib = await Bun.build({
    entrypoints: entries,
    outdir: dist,
    format: "esm",
    target: "browser",
    splitting: true,
    external: ["@opentelemetry/*"],
  });
  if (!lib.success) throw new AggregateError(lib.logs, "build failed");
  const browser = await Bun.build({
    entrypoints: [join(root, "src", "index.ts")],
    outdir: join(dist, "browser"),
    naming: "cellar.min.js",
    format: "esm",
    target: "browser",
    minify: true,
  });
  if (!browser.success) throw new AggregateError(browser.logs, "browser build failed");
  const tsc = spawnSync([process.execPath, "x", "tsc", "-p", join(root, "tsconfig.json")], { cwd: root });
  if (tsc.exitCode !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
  const minified = await Bun.file(join(dist, "browser", "cellar.min.js")).bytes();
  return { browserGzipBytes: gzipSync(minified).byteLength };
}

if (import.meta.main) {
  const { browserGzipBytes } = await build();
  console.log(`browser build of the core: ${browserGzipBytes} bytes gzipped (budget ${BROWSER_BUDGET_BYTES})`);
  if (browserGzipBytes > BROWSER_BUDGET_BYTES) process.exit(1);
}
