import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Where the dashboard's source lives (web/ at the repository root). */
// import.meta.dirname, not Bun's import.meta.dir: the apps also run under Deno (test/deploy-deno.test.ts).
export const WEB_ROOT = resolve(import.meta.dirname, "../../../../web");

export interface BuiltDashboard {
  js: { body: string; name: string };
  css: { body: string; name: string };
  html: string;
}

const contentHash = (s: string) => Bun.hash(s).toString(36);

/**
 * Bundles web/src/main.tsx with Bun's own bundler (Bun.build: JSX for Preact, minified, one file)
 * and pairs it with the stylesheet. File names carry a content hash so browsers may cache them
 * for good; the HTML that names them is never cached.
 */
export async function buildDashboard(webRoot = WEB_ROOT): Promise<BuiltDashboard> {
  const result = await Bun.build({
    entrypoints: [join(webRoot, "src/main.tsx")],
    target: "browser",
    minify: true,
    // Preact is the JSX runtime (web/tsconfig.json says the same for editors and tsc).
    tsconfig: join(webRoot, "tsconfig.json"),
  } as Parameters<typeof Bun.build>[0]);
  if (!result.success) throw new AggregateError(result.logs, "dashboard build failed");
  const entry = result.outputs.find((o) => o.kind === "entry-point");
  if (!entry) throw new Error("dashboard build produced no entry point");
  const js = await entry.text();
  // uPlot's own rules first (the overview's charts), then ours; one stylesheet, as the CSP wants.
  const css = [
    await readFile(join(webRoot, "../node_modules/uplot/dist/uPlot.min.css"), "utf8"),
    await readFile(join(webRoot, "src/styles.css"), "utf8"),
  ].join("\n");
  const jsName = `app.${contentHash(js)}.js`;
  const cssName = `app.${contentHash(css)}.css`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cellar</title>
<link rel="stylesheet" href="/assets/${cssName}">
<script type="module" src="/assets/${jsName}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Cellar dashboard needs JavaScript. The API is at /api/v1.</noscript>
</body>
</html>
`;
  return { js: { body: js, name: jsName }, css: { body: css, name: cssName }, html };
}
