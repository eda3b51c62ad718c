/**
 * `bun scripts/bundle.ts <outdir> [--compiled] [apps...]`: each app's `main.ts` bundled into one
 * file (docs/operations.md, "Start-up"): `<outdir>/<app>/main.js` (ESM, run with `bun
 * <outdir>/<app>/main.js`), and with `--compiled` also `<outdir>/<app>-bin`, a standalone
 * executable with Bun's bytecode (`bun build --compile --bytecode --format=esm`: bytecode of an
 * ES module needs --compile, and the apps' entry points await at the top level). The files an app
 * reads beside its modules at run time are copied next to the bundle: the migrations
 * (shared/db/client.ts) and ingest's OTLP `.proto` files (shared/otlp/decode.ts). The compiled
 * executable cannot read them (its modules live in a virtual file system): start it with
 * SETUP_ON_START=false, the setup run apart (scripts/migrate.ts), and not as ingest.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
export const BUNDLED_APPS = ["processor", "ingest", "dispatcher", "platform"] as const;
export type BundledApp = (typeof BUNDLED_APPS)[number];

/**
 * Files read at run time from beside the module that reads them: copied beside the bundle. Every
 * app applies the migrations when it starts (SETUP_ON_START, shared/lifecycle.ts) from
 * `migrations/` beside shared/db/client.ts.
 */
const BESIDE: Partial<Record<BundledApp, Array<{ from: string; to: string }>>> = Object.fromEntries(
  BUNDLED_APPS.map((app) => [
    app,
    [
      { from: "shared/db/migrations", to: "migrations" },
      ...(app === "ingest" ? [{ from: "shared/otlp/proto", to: "proto" }] : []),
    ],
  ]),
);

function bunBuild(args: string[]): void {
  const r = spawnSync(process.execPath, ["build", ...args], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error(`bun build ${args.join(" ")} failed (${r.status ?? r.signal})`);
}

/** Builds `apps` into `outdir`; returns the command line of each (`argv` to spawn). */
export function bundleApps(
  outdir: string,
  opts: { compiled?: boolean; apps?: readonly BundledApp[] } = {},
): Record<string, { bundle: string[]; compiled?: string[] }> {
  const out: Record<string, { bundle: string[]; compiled?: string[] }> = {};
  for (const app of opts.apps ?? BUNDLED_APPS) {
    const entry = `apps/${app}/src/main.ts`;
    const dir = join(outdir, app);
    mkdirSync(dir, { recursive: true });
    bunBuild([entry, "--target=bun", "--format=esm", `--outdir=${dir}`]);
    // Ingest's offload worker (apps/ingest/src/offload/worker.ts) is a module a thread loads by URL:
    // bundled beside main.js, where main.ts looks for it when it runs as a bundle.
    if (app === "ingest")
      bunBuild([
        "apps/ingest/src/offload/worker.ts",
        "--target=bun",
        "--format=esm",
        `--outfile=${join(dir, "offload-worker.js")}`,
      ]);
    for (const f of BESIDE[app] ?? []) cpSync(join(ROOT, f.from), join(dir, f.to), { recursive: true });
    out[app] = { bundle: [process.execPath, join(dir, "main.js")] };
    if (opts.compiled) {
      const bin = join(outdir, `${app}-bin`);
      bunBuild([entry, "--compile", "--bytecode", "--format=esm", `--outfile=${bin}`]);
      out[app].compiled = [bin];
    }
  }
  return out;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const outdir = args.find((a) => !a.startsWith("--") && !BUNDLED_APPS.includes(a as BundledApp));
  if (!outdir) {
    console.error("usage: bun scripts/bundle.ts <outdir> [--compiled] [processor|ingest|dispatcher|platform ...]");
    process.exit(2);
  }
  const apps = args.filter((a) => BUNDLED_APPS.includes(a as BundledApp)) as BundledApp[];
  const built = bundleApps(resolve(outdir), {
    compiled: args.includes("--compiled"),
    apps: apps.length ? apps : undefined,
  });
  for (const [app, cmd] of Object.entries(built)) console.log(app, cmd.bundle.join(" "), cmd.compiled?.join(" ") ?? "");
}
