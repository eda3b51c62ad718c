import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
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

/** Signs in through the dashboard's form and waits for the page it lands on (Sessions). */
export async function signInOnPage(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
}

/** Stops what a dashboard test started: the browser, the platform it listened on, the stack. */
export async function stopDashboardTest(
  browser: { close(): Promise<void> } | undefined,
  stack: { platform: { stop(): Promise<unknown> }; stop(): Promise<unknown> } | undefined,
): Promise<void> {
  await browser?.close();
  await stack?.platform.stop().catch(() => {});
  await stack?.stop();
}

/** Chromium and a stack started side by side, with the page a dashboard test drives. */
export async function launchBeside<S>(
  startStack: () => Promise<S>,
): Promise<{ browser: Awaited<ReturnType<typeof launchChromium>>; page: Page; stack: S }> {
  const [browser, stack] = await Promise.all([launchChromium(), startStack()]);
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  return { browser, page, stack };
}
