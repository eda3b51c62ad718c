// From an empty database to a first transcript with no CLI, in Chromium against the apps as
// separate processes (main.ts of ingest, platform and processor, as containers run them): the
// setup token from the platform's log, the organization and its owner, a DSN and its snippets, a
// trace sent with it, the live wait turning into the session. Then a client DSN used from a page
// on its allowed origin (stored) and from another origin (403), and an invited member's role.
// Screenshots: test-output/dashboard-first-run/ (or $TEST_OUTPUT_DIR/dashboard-first-run/).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { type AppProcesses, startAppProcesses } from "./helpers/app-processes";
import { launchChromium, testOutputDir } from "./helpers/browser";
import { createTestDatabase } from "./helpers/infra";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

const PASSWORD = "correct horse battery staple";
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: AppProcesses;
let ingestUrl = "";
let base = "";
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
/** Two sites a browser app could be served from: the client DSN allows only the first. */
let allowedSite: ReturnType<typeof Bun.serve>;
let otherSite: ReturnType<typeof Bun.serve>;
const shots = testOutputDir("dashboard-first-run");
const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 2 });
  const site = () =>
    Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        new Response("<!doctype html><title>shop</title><p>A shop</p>", { headers: { "content-type": "text/html" } }),
    });
  allowedSite = site();
  otherSite = site();
  const [launched, started] = await Promise.all([
    launchChromium(),
    startAppProcesses(testDb.url, ["ingest", "platform", "processor"]),
  ]);
  stack = started;
  ingestUrl = stack.ingestUrl;
  base = stack.platformUrl.replace("/api/v1", "");
  browser = launched;
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop("SIGTERM");
  allowedSite?.stop(true);
  otherSite?.stop(true);
  await database?.close();
  await testDb?.drop();
});

/** The setup token the platform printed ("first run: ..."), read from its log as an operator would. */
async function setupTokenFromLog(): Promise<string> {
  return waitFor(
    async () => {
      for (const line of stack.output("platform").split("\n")) {
        if (!line.includes("first run")) continue;
        const token = JSON.parse(line).setupToken;
        if (token) return token as string;
      }
      return null;
    },
    { what: "the setup token in the platform's log", timeoutMs: 30_000 },
  );
}

/**
 * A POST from the page's own origin (a browser app), answered with the status the network saw
 * (Chrome DevTools Protocol): a refused origin gets its 403 without CORS headers, so the page's
 * own script sees only a failed fetch, as a real app would.
 */
async function browserPost(url: string, dsn: string, body: unknown): Promise<{ status: number; pageSaw: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  const posts = new Set<string>();
  const statuses = new Map<string, number>();
  cdp.on("Network.requestWillBeSent", (e) => {
    if (e.request.url === url && e.request.method === "POST") posts.add(e.requestId);
  });
  cdp.on("Network.responseReceivedExtraInfo", (e) => statuses.set(e.requestId, e.statusCode));
  const pageSaw = await page.evaluate(
    async ({ url, dsn, body }) => {
      try {
        const r = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${dsn}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return String(r.status);
      } catch (err) {
        return `fetch failed: ${(err as Error).message}`;
      }
    },
    { url, dsn, body },
  );
  const status = await waitFor(async () => [...posts].map((id) => statuses.get(id)).find((s) => s !== undefined), {
    what: "the POST's status on the network",
  });
  await cdp.detach();
  return { status, pageSaw };
}

test("first run: the setup page with the token from the log creates the organization and its owner", async () => {
  const token = await setupTokenFromLog();
  expect(token).toStartWith("cel_setup_");
  await page.goto(`${base}/`);
  await page.getByRole("heading", { name: "Set up Cellar" }).waitFor();
  await shot("01-setup");
  await page.getByLabel("Setup token").fill("cel_setup_wrong");
  await page.getByLabel("Organization name").fill("Acme Robotics");
  await page.getByLabel("Your email").fill("founder@acme.test");
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByLabel("Repeat it").fill(PASSWORD);
  await page.getByRole("button", { name: "Create organization and owner" }).click();
  expect(await page.getByRole("alert").textContent()).toContain("invalid token");
  await page.getByLabel("Setup token").fill(token);
  await page.getByRole("button", { name: "Create organization and owner" }).click();
  await page.getByRole("heading", { name: "Send your first trace" }).waitFor();
  // Used once: a second setup with the same token is refused, and the page no longer offers it.
  const again = await fetch(`${base}/auth/setup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token, organization: "Evil", email: "evil@x.test", password: PASSWORD }),
  });
  expect(again.status).toBe(409);
  expect(await (await fetch(`${base}/auth/setup`)).json()).toEqual({ needed: false });
  const [row] = await database.sql<{ n: number }[]>`select count(*)::int as n from tenants`;
  expect(row.n).toBe(1);
  const stored = await database.sql<{ token_hash: string; used_at: Date | null }[]>`select * from setup_tokens`;
  expect(stored.every((s) => s.used_at !== null && s.token_hash !== token)).toBe(true);
});

test("send your first trace: a DSN carrying its endpoint, the snippets, the live wait turns into the session", async () => {
  await page.getByLabel("Service name").fill("shop-assistant");
  await page.getByRole("button", { name: "Create a server DSN" }).click();
  const dsn = (await page.getByTestId("first-dsn").textContent())!;
  expect(dsn).toStartWith("svc-ing-s-");
  const config = JSON.parse(Buffer.from(dsn.slice("svc-ing-s-".length, dsn.lastIndexOf(".")), "base64url").toString());
  expect(config).toEqual({ v: 1, e: ingestUrl, s: "shop-assistant" });
  for (const id of ["typescript", "python", "curl", "otlp"])
    expect(await page.getByTestId(`snippet-${id}`).textContent()).toContain(dsn);
  expect(await page.getByTestId("snippet-otlp").textContent()).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=${ingestUrl}`);
  expect(await page.getByTestId("snippet-curl").textContent()).toContain(`${ingestUrl}/raw/traces`);
  await page.getByText("Waiting for the first trace of shop-assistant").waitFor();
  await shot("02-first-trace-waiting");
  // The app sends its first trace with the DSN, to the endpoint the DSN carries.
  const sent = await fetch(`${config.e}/raw/traces`, {
    method: "POST",
    headers: { authorization: `Bearer ${dsn}`, "content-type": "application/json" },
    body: JSON.stringify(
      chatTrace({
        sessionId: "first-session",
        serviceName: "shop-assistant",
        messages: [{ role: "user", content: "Do you ship to Norway?" }],
        reply: "Yes, in 3 to 5 days.",
      }),
    ),
  });
  expect(sent.status).toBe(200);
  const link = page.getByRole("link", { name: "open session first-session" });
  await link.waitFor({ timeout: 30_000 });
  await shot("03-first-trace-arrived");
  await link.click();
  await page.getByRole("heading", { name: "Session first-session" }).waitFor();
  await page.locator(".badge-complete", { hasText: "Complete" }).waitFor({ timeout: 30_000 });
  await page.getByRole("list", { name: "Transcript" }).getByText("Yes, in 3 to 5 days.").waitFor();
  await shot("04-first-transcript");
});

test("the overview: the first session in totals and charts (each with a text summary and keyboard focus), and a service with none", async () => {
  await page.goto(`${base}/overview?service=shop-assistant&window=1h`);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.getByTestId("total-sessions").filter({ hasText: /^1$/ }).waitFor({ timeout: 30_000 });
  const traffic = page.getByRole("figure", { name: "Traces and sessions" });
  expect(await traffic.getAttribute("tabindex")).toBe("0");
  expect(await page.getByTestId("summary-traffic").textContent()).toMatch(
    /^Traces: 1 in total, highest 1 at .*; Sessions: 1 in total/,
  );
  // The chart draws after the totals render (uPlot in an effect): wait for it, then count.
  await traffic.locator("canvas").first().waitFor();
  expect(await traffic.locator("canvas").count()).toBe(1);
  await traffic.focus();
  expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-describedby"))).toBe("traffic-s");
  expect(await page.locator("section[aria-labelledby=models-h]").getByText("gpt-4o-mini").isVisible()).toBe(true);
  await shot("04b-overview");
  // A service nothing was sent to yet: zeros and a note, no chart.
  const created = await page.evaluate(async () => {
    const r = await fetch("/api/v1/organization/services", {
      method: "POST",
      headers: {
        authorization: `Bearer ${localStorage.getItem("cellar.dashboard.token")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ name: "quiet-service" }),
    });
    return r.status;
  });
  expect(created).toBe(201);
  await page.goto(`${base}/overview?service=quiet-service`);
  await page.getByText("No session of quiet-service matured in this window.").waitFor();
  expect(await page.getByTestId("summary-traffic").textContent()).toBe("No data in this window.");
  await shot("04c-overview-empty");
});

test("a client DSN with an allowed origin: stored from that origin's page, 403 from another", async () => {
  const allowedOrigin = `http://127.0.0.1:${allowedSite.port}`;
  await page.goto(`${base}/organization`);
  await page.getByRole("heading", { name: "Telemetry keys and DSNs" }).waitFor();
  await page.getByLabel("Kind").selectOption("dsn-client");
  await page.getByLabel("Service (an existing one, or a new name: ingestion creates it)").fill("shop-assistant");
  await page.getByLabel("Name (what it is for)").fill("storefront");
  // The exact-origin rule is checked as it is typed: a trailing slash is not an origin.
  await page.getByLabel("Allowed origins", { exact: true }).fill(`${allowedOrigin}/`);
  await page.getByText(`did you mean ${allowedOrigin}?`).waitFor();
  await page.getByLabel("Allowed origins", { exact: true }).fill(allowedOrigin);
  await page.getByRole("button", { name: "Create", exact: true }).click();
  const clientDsn = (await page.getByTestId("new-dsn").textContent())!;
  expect(clientDsn).toStartWith("svc-ing-c-");
  await page.locator("tr", { hasText: "storefront" }).getByRole("cell", { name: allowedOrigin }).waitFor();
  await shot("05-organization-keys");
  const trace = (sessionId: string) =>
    chatTrace({ sessionId, serviceName: "shop-assistant", messages: [{ role: "user", content: "hi" }], reply: "hey" });
  await page.goto(`${allowedOrigin}/`);
  expect(await browserPost(`${ingestUrl}/raw/traces`, clientDsn, trace("from-allowed-origin"))).toEqual({
    status: 200,
    pageSaw: "200",
  });
  await page.goto(`http://127.0.0.1:${otherSite.port}/`);
  // The 403 carries CORS headers (docs/ingestion.md), so the page, not only the network, sees it.
  expect(await browserPost(`${ingestUrl}/raw/traces`, clientDsn, trace("from-other-origin"))).toEqual({
    status: 403,
    pageSaw: "403",
  });
  await waitFor(
    async () => (await database.sql`select 1 from sessions where session_id = 'from-allowed-origin'`).length > 0,
    { what: "the allowed origin's trace stored" },
  );
  expect((await database.sql`select 1 from sessions where session_id = 'from-other-origin'`).length).toBe(0);
});

/** Invites a member of the default project from the organization page; the invitation's link. */
async function inviteMember(email: string): Promise<string> {
  await page.goto(`${base}/organization`);
  await page.getByLabel("Email of the new member").fill(email);
  await page.getByLabel("Role of the new member").selectOption("member");
  await page
    .getByRole("group", { name: /Projects \(viewers/ })
    .getByLabel("default")
    .check();
  await page.getByRole("button", { name: "Invite" }).click();
  return (await page.getByTestId("invitation-link").textContent())!;
}

test("invite a member, who accepts and can read but not manage", async () => {
  const link = await inviteMember("analyst@acme.test");
  expect(link).toStartWith(`${base}/invite#cel_inv_`);
  await page.locator("tr[data-member='analyst@acme.test']").getByText("invited").waitFor();
  await shot("06-organization-members");
  await page.getByRole("button", { name: "Sign out" }).click();
  // Signed out once the sign-in page shows: the click returns before the sign-out's request ends
  // and the token is cleared, and an invitation opened meanwhile kept the owner's `me` (a loaded
  // run saw the owner's Webhooks link in the member's navigation).
  await page.getByRole("heading", { name: "Sign in to Cellar" }).waitFor();
  await page.goto(link);
  await page.getByLabel("New password").fill(PASSWORD);
  await page.getByLabel("Repeat it").fill(PASSWORD);
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  // A member reads sessions of their project and the organization, and manages nothing.
  const nav = page.getByRole("navigation", { name: "Main" });
  expect(await nav.getByRole("link", { name: "Webhooks" }).count()).toBe(0);
  await nav.getByRole("link", { name: "Organization" }).click();
  await page.getByText("Keys and DSNs are managed by the admins and owners").waitFor();
  expect(await page.getByRole("button", { name: "Invite" }).count()).toBe(0);
  expect(await page.getByRole("button", { name: "Create project" }).count()).toBe(0);
  await shot("07-organization-as-member");
  const memberToken = (await page.evaluate(() => localStorage.getItem("cellar.dashboard.token")))!;
  const as = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${base}/api/v1${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
  expect((await as(memberToken, "/organization")).status).toBe(200);
  expect((await as(memberToken, "/organization/keys")).status).toBe(403);
  const post = { method: "POST", body: JSON.stringify({ kind: "telemetry" }) };
  expect((await as(memberToken, "/organization/keys", post)).status).toBe(403);
  const read = await as(memberToken, "/telemetry/otel/sessions/filtered", {
    method: "POST",
    body: JSON.stringify({ serviceName: "shop-assistant", limit: 5 }),
  });
  expect(read.status).toBe(200);
  // The owner (signed out above: signed in again) deprovisions the member: their sign-in stops at once.
  const signIn = await fetch(`${base}/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "founder@acme.test", password: PASSWORD }),
  });
  const ownerToken = ((await signIn.json()) as { token: string }).token;
  const members = (await (await as(ownerToken, "/organization/members")).json()) as { members: any[] };
  const analyst = members.members.find((m) => m.email === "analyst@acme.test");
  expect((await as(ownerToken, `/organization/members/${analyst.id}/deprovision`, { method: "POST" })).status).toBe(
    200,
  );
  expect((await as(memberToken, "/organization")).status).toBe(401);
});

test("an invitation accepted while another user is signed in shows the new member's pages, not the other's", async () => {
  await page.evaluate(() => localStorage.clear());
  await page.goto(`${base}/sign-in`);
  await page.getByLabel("Email").fill("founder@acme.test");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  const link = await inviteMember("second-analyst@acme.test");
  const nav = page.getByRole("navigation", { name: "Main" });
  expect(await nav.getByRole("link", { name: "Webhooks" }).count()).toBe(1); // the owner's
  // Still signed in as the owner: the invitation is opened in the same browser.
  await page.goto(link);
  await page.getByLabel("New password").fill(PASSWORD);
  await page.getByLabel("Repeat it").fill(PASSWORD);
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  await nav.getByRole("link", { name: "Organization" }).click();
  await page.getByText("Keys and DSNs are managed by the admins and owners").waitFor();
  expect(await nav.getByRole("link", { name: "Webhooks" }).count()).toBe(0);
  expect(await page.getByRole("button", { name: "Invite" }).count()).toBe(0);
});
