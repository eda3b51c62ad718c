import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { setPassword } from "@cellar/shared/admin/signin";
import { bootstrapTenant, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import type { Role } from "@cellar/shared/db/schema";
import { scanDeadLetters } from "@cellar/shared/nats/dead-letters";
import { launchChromium, testOutputDir } from "./helpers/browser";
import { deadLetterIngest, PRE_FIX_REASON } from "./helpers/dead-letters";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * /api/v1/dead-letters and the dashboard's Dead letters page (issue 21, "loss is loud"): admins
 * and owners see and replay their own tenant's ingest dead letters, nobody else's.
 * Screenshot: test-output/dead-letters/dead-letters.png (or $TEST_OUTPUT_DIR/dead-letters/).
 */
const PASSWORD = "correct horse battery staple";
let stack: TestStack;
let a: Awaited<ReturnType<typeof bootstrapTenant>>;
let b: Awaited<ReturnType<typeof bootstrapTenant>>;
const keys: Partial<Record<Role, string>> = {};

const get = (token?: string) => stack.platformRequest("/dead-letters", { token });
const post = (path: string, token?: string) => stack.platformRequest(path, { method: "POST", token });
const ingest = (telemetryKey: string, sessionId: string) =>
  stack.ingestRequest(
    "/raw/traces",
    chatTrace({ sessionId, messages: [{ role: "user", content: `Hello from ${sessionId}` }], reply: "Hi." }),
    { authorization: `Bearer ${telemetryKey}` },
  );
const transcriptStatus = async (platformKey: string, sessionId: string) =>
  (await stack.platformRequest(`/telemetry/otel/sessions/support-bot/${sessionId}/transcript`, { token: platformKey }))
    .status;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  a = await bootstrapTenant(stack.database.db, { name: "acme" });
  b = await bootstrapTenant(stack.database.db, { name: "globex", email: "owner@globex.test" });
  keys.owner = a.platformKey;
  for (const role of ["admin", "member", "viewer"] as const) {
    const u = await createUser(stack.database.db, { tenantId: a.tenantId, email: `${role}@acme.test`, role });
    keys[role] = (await createApiKey(stack.database.db, { kind: "platform", userId: u.id })).key;
  }
  // Three calls answered as stored, then set aside the way the pre-fix processor did: two of
  // tenant A's, one of B's. The fixed processor starts afterwards.
  for (const [key, session] of [
    [a.telemetryKey, "a-1"],
    [a.telemetryKey, "a-2"],
    [b.telemetryKey, "b-1"],
  ])
    expect((await ingest(key, session)).status).toBe(200);
  await deadLetterIngest(stack.nats, 3);
  await stack.startProcessor();
}, 60_000);
afterAll(() => stack.stop());

test("only admins and owners see the dead letters, each only their own tenant's", async () => {
  expect((await get()).status).toBe(401);
  for (const role of ["viewer", "member"] as const) {
    const r = await get(keys[role]);
    expect(r.status).toBe(403);
    expect(await r.json()).toEqual({ error: "dead letters need role admin or higher" });
    expect((await post("/dead-letters/replay", keys[role])).status).toBe(403);
  }
  for (const role of ["admin", "owner"] as const) {
    const r = await get(keys[role]);
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toMatchObject({ count: 2, truncated: false });
    expect(body.data.map((d: any) => [d.kind, d.serviceName, d.sessionId, d.reason, d.deliveries])).toEqual([
      ["trace", "support-bot", "a-1", PRE_FIX_REASON, 1],
      ["trace", "support-bot", "a-2", PRE_FIX_REASON, 1],
    ]);
  }
  const theirs = await (await get(b.platformKey)).json();
  expect(theirs.data.map((d: any) => d.sessionId)).toEqual(["b-1"]);
});

test("a scan reads at most maxScanned stored dead letters and says when it stopped early", async () => {
  const { jsm, topology } = stack.nats;
  const scan = async (maxScanned: number, tenant?: string) => {
    const seen: string[] = [];
    const { truncated } = await scanDeadLetters(jsm, topology, { stream: "ingest", tenant, maxScanned }, (dl) => {
      seen.push(dl.tenant!);
      return true;
    });
    return { truncated, seen: seen.length };
  };
  expect(await scan(2)).toEqual({ truncated: true, seen: 2 });
  expect(await scan(3)).toEqual({ truncated: false, seen: 3 });
  // Another tenant's dead letters are read (they count against the bound) but not visited.
  expect(await scan(3, b.tenantId)).toEqual({ truncated: false, seen: 1 });
});

test("a tenant cannot replay another's dead letter; bad seqs name the field", async () => {
  const mine = (await (await get(a.platformKey)).json()).data;
  const r = await post(`/dead-letters/${mine[0].seq}/replay`, b.platformKey);
  expect(r.status).toBe(404);
  expect(await r.json()).toEqual({ error: "no such dead letter" });
  for (const seq of ["0", "-1", "x", "1e3", "99999999999999999"])
    expect(await (await post(`/dead-letters/${seq}/replay`, a.platformKey)).json()).toEqual({
      error: "invalid seq: must be a positive integer",
    });
  expect((await post("/dead-letters/999999/replay", a.platformKey)).status).toBe(404);

  // B's "replay all" replays B's one and leaves A's two.
  const replayed = await (await post("/dead-letters/replay", b.platformKey)).json();
  expect(replayed).toMatchObject({ replayed: 1, more: false });
  expect((await (await get(a.platformKey)).json()).count).toBe(2);
  await waitFor(async () => (await transcriptStatus(b.platformKey, "b-1")) === 200, { what: "B's replayed call" });
  expect((await (await get(b.platformKey)).json()).count).toBe(0);
});

test("the dashboard shows an admin the count and replays them (screenshot)", async () => {
  await setPassword(stack.database.db, { userId: a.ownerId, password: PASSWORD });
  stack.platform.listen({ port: 0, hostname: "127.0.0.1" });
  const base = `http://127.0.0.1:${stack.platform.server!.port}`;
  const browser = await launchChromium();
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await page.goto(`${base}/`);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Dead letters" }).click();
    await page.getByRole("heading", { name: "Dead letters" }).waitFor();
    await page.getByTestId("dead-letter-count").filter({ hasText: "2 dead letters" }).waitFor();
    expect(await page.locator("table.list tbody tr").count()).toBe(2);
    await page.screenshot({ path: join(testOutputDir("dead-letters"), "dead-letters.png"), fullPage: true });

    await page.getByRole("button", { name: "Replay dead letter" }).first().click();
    await page.getByTestId("dead-letter-count").filter({ hasText: "1 dead letter." }).waitFor();
    await page.getByRole("button", { name: "Replay all" }).click();
    await page.getByTestId("dead-letter-count").filter({ hasText: "0 dead letters" }).waitFor();
    await page.screenshot({ path: join(testOutputDir("dead-letters"), "dead-letters-replayed.png"), fullPage: true });
  } finally {
    await browser.close();
    await stack.platform.stop().catch(() => {});
  }
  for (const session of ["a-1", "a-2"])
    await waitFor(async () => (await transcriptStatus(a.platformKey, session)) === 200, { what: `${session} landed` });
}, 120_000);
