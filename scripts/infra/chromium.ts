import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Debian's chromium: what the dashboard's browser tests and bench drive (playwright-core). */
export const CHROMIUM_BIN = "/usr/bin/chromium";

/**
 * Flags for a quiet, reproducible headless run: no sandbox (containers and root), no GPU, no
 * network chatter of Chromium's own (QUIC, component updates, sync), no first-run UI.
 * `--user-data-dir` is given per run by launchPersistentContext (a fresh temporary directory).
 */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Installs chromium with apt-get when missing (scripts/install-chromium.sh); returns its path. */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM_BIN)) return CHROMIUM_BIN;
  const r = spawnSync("bash", [join(import.meta.dir, "../install-chromium.sh")], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error("could not install chromium (scripts/install-chromium.sh failed; see above)");
  return CHROMIUM_BIN;
}
