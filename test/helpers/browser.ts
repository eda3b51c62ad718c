import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { CHROMIUM_FLAGS, ensureChromium } from "../../scripts/infra/chromium";

/** Where browser tests write screenshots: TEST_OUTPUT_DIR, else test-output/ at the repo root. */
export function testOutputDir(name: string): string {
  const dir = resolve(process.env.TEST_OUTPUT_DIR ?? join(import.meta.dir, "../../test-output"), name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Debian's headless chromium (installed when missing) with a fresh profile directory, driven by
 * playwright-core. `close()` ends the browser and removes the profile.
 */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const executablePath = ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), "cellar-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
    timeout: 30_000,
  });
  context.setDefaultTimeout(30_000); // generous: the machines are shared and often loaded
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
