import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { launchChromium } from "./helpers/browser";
import { startSdkApps } from "./helpers/sdk-apps";
import { waitFor } from "./helpers/stack";

// The browser build of cellar-sdk's core in Chromium, against the ingest host as a process:
// a client DSN from its allowed origin is stored; from another origin the 403 reaches onError,
// the page sees no exception, and nothing is retried.
const SDK = join(import.meta.dir, "../sdks/typescript");
let apps: Awaited<ReturnType<typeof startSdkApps>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
const pages: Array<ReturnType<typeof Bun.serve>> = [];
let clientDsn = "";
let serverDsn = "";
let leavingPage: ReturnType<typeof Bun.serve>;

/** A page server: / runs `script` with the browser build importable as /cellar.js. */
function servePage(bundle: string, script: () => string) {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) =>
      new URL(req.url).pathname === "/cellar.js"
        ? new Response(bundle, { headers: { "content-type": "text/javascript" } })
        : new Response(`<!doctype html><script type="module">${script()}</script>`, {
            headers: { "content-type": "text/html" },
          }),
  });
  pages.push(server);
  return server;
}

const pageScript = (dsn: string, sessionId: string) => `
  import { Cellar } from "/cellar.js";
  window.report = { errors: [], thrown: null };
  try {
    const cellar = new Cellar({ dsn: ${JSON.stringify(dsn)}, onError: (e) => window.report.errors.push({ kind: e.kind, status: e.status, message: e.message }) });
    cellar.event({ name: "page_view", session_id: ${JSON.stringify(sessionId)}, attributes: { path: location.pathname } });
    cellar.event({ name: "click", session_id: ${JSON.stringify(sessionId)} });
    window.report.flush = await cellar.flush();
    cellar.event({ name: "after", session_id: ${JSON.stringify(sessionId)} });
    window.report.second = await cellar.flush();
  } catch (err) {
    window.report.thrown = String(err);
  }
  window.report.done = true;
`;

beforeAll(async () => {
  const build = spawnSync(process.execPath, ["run", join(SDK, "scripts/build.ts")], { encoding: "utf8" });
  if (build.status !== 0) throw new Error(build.stderr);
  console.log(build.stdout.trim());
  const bundle = readFileSync(join(SDK, "dist/browser/cellar.min.js"), "utf8");
  apps = await startSdkApps();
  tenant = await bootstrapTenant(apps.database.db, { name: "sdk-browser" });
  let allowed = "";
  const allowedPage = servePage(bundle, () => pageScript(clientDsn, "browser-allowed"));
  allowed = `http://127.0.0.1:${allowedPage.port}`;
  servePage(bundle, () => pageScript(clientDsn, "browser-other"));
  servePage(bundle, () => pageScript(serverDsn, "browser-server-dsn"));
  // Queues an event and never flushes: only the pagehide hook can send it.
  leavingPage = servePage(
    bundle,
    () => `
      import { Cellar } from "/cellar.js";
      const cellar = new Cellar({ dsn: ${JSON.stringify(clientDsn)}, flushIntervalMs: 600000 });
      cellar.event({ name: "left", session_id: "browser-pagehide" });
      window.ready = true;
    `,
  );
  const mint = (kind: "dsn-client" | "dsn-server", origins?: string[]) =>
    createApiKey(apps.database.db, {
      kind,
      tenantId: tenant.tenantId,
      serviceName: "web-app",
      origins,
      endpoint: apps.ingestUrl,
    });
  clientDsn = (await mint("dsn-client", [allowed, `http://127.0.0.1:${leavingPage.port}`])).key;
  serverDsn = (await mint("dsn-server")).key;
  chromium = await launchChromium();
});
afterAll(async () => {
  await chromium?.close();
  for (const p of pages) p.stop(true);
  await apps?.stop();
});

async function visit(index: number) {
  const page = await chromium.context.newPage();
  const pageErrors: string[] = [];
  const batches: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("request", (r) => {
    if (r.url().endsWith("/raw/batch") && r.method() === "POST") batches.push(r.url());
  });
  await page.goto(`http://127.0.0.1:${pages[index].port}/`);
  await page.waitForFunction(() => (window as any).report?.done === true, undefined, { timeout: 30_000 });
  const report = await page.evaluate(() => (window as any).report);
  // Time for a retry storm to show itself, were there one.
  await page.waitForTimeout(1500);
  await page.close();
  return { report, pageErrors, batches };
}

const stored = (sessionId: string) =>
  apps.database.sql<
    { name: string }[]
  >`select name from events where tenant_id = ${tenant.tenantId} and session_id = ${sessionId} order by name`;

test("from its allowed origin, a client DSN's events are stored", async () => {
  const { report, pageErrors } = await visit(0);
  expect(pageErrors).toEqual([]);
  expect(report).toMatchObject({ thrown: null, errors: [], flush: { sent: 2, refused: 0 }, second: { sent: 1 } });
  const rows = await waitFor(async () => {
    const r = await stored("browser-allowed");
    return r.length === 3 ? r : null;
  });
  expect(rows.map((r) => r.name)).toEqual(["after", "click", "page_view"]);
});

test("from another origin: the 403 reaches onError, no exception, no retry storm", async () => {
  const { report, pageErrors, batches } = await visit(1);
  expect(pageErrors).toEqual([]);
  expect(report.thrown).toBeNull();
  expect(report.errors[0]).toMatchObject({ kind: "refused", status: 403 });
  expect(report.errors[0].message).toContain("allowed origins");
  expect(report.flush).toMatchObject({ sent: 0, refused: 2, retried: 0 });
  // After a 403 the SDK stops sending for a while: the later event is dropped, not posted.
  expect(report.second).toMatchObject({ sent: 0, dropped: 1, retried: 0 });
  expect(batches.length).toBe(1);
  expect([...(await stored("browser-other"))]).toEqual([]);
});

test("a server DSN in a browser is refused at construction, before anything is sent", async () => {
  const { report, batches } = await visit(2);
  expect(report.thrown).toContain("server DSN");
  expect(batches).toEqual([]);
});

test("leaving the page sends what is queued (pagehide, keepalive)", async () => {
  const page = await chromium.context.newPage();
  const sent: string[] = [];
  page.on("request", (r) => {
    if (r.url().endsWith("/raw/batch") && r.method() === "POST") sent.push(r.url());
  });
  await page.goto(`http://127.0.0.1:${leavingPage.port}/`);
  await page.waitForFunction(() => (window as any).ready === true);
  expect(sent).toEqual([]);
  await page.goto("about:blank");
  const rows = await waitFor(async () => {
    const r = await stored("browser-pagehide");
    return r.length ? r : null;
  });
  expect(rows.map((r) => r.name)).toEqual(["left"]);
  await page.close();
});
