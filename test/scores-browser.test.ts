// End-user feedback from a browser: a page in Chromium sends a thumbs-down score with a client DSN
// restricted to its origin, through the apps running as separate processes. A page on another
// origin is refused (403, and the browser sees no CORS grant); a score sent before its trace is
// kept and shows on the session once the session exists; a retried score is stored once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { startAppProcesses } from "./helpers/app-processes";
import { launchChromium } from "./helpers/browser";
import { createTestDatabase } from "./helpers/infra";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

const SERVICE = "shop-assistant";
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: Awaited<ReturnType<typeof startAppProcesses>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
const pages: Array<ReturnType<typeof Bun.serve>> = [];

const page = () =>
  Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response("<!doctype html><title>shop</title><p>How was this answer?</p>", {
        headers: { "content-type": "text/html" },
      }),
  });

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 4 });
  [stack, browser] = await Promise.all([
    startAppProcesses(testDb.url, ["ingest", "platform", "processor"]),
    launchChromium(),
  ]);
  pages.push(page(), page());
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  for (const p of pages) p.stop(true);
  await database?.close();
  await testDb?.drop();
});

test("a client DSN scores from its allowed origin, not from another; before its trace, once per retry", async () => {
  const tenant = await bootstrapTenant(database.db, { name: "shop" });
  const [allowed, other] = pages.map((p) => `http://127.0.0.1:${p.port}`);
  const dsn = (
    await createApiKey(database.db, {
      kind: "dsn-client",
      tenantId: tenant.tenantId,
      serviceName: SERVICE,
      origins: [allowed],
    })
  ).key;
  const sendFrom = async (origin: string, body: unknown) => {
    const tab = await browser.context.newPage();
    try {
      await tab.goto(origin);
      return await tab.evaluate(
        async ({ url, dsn, body }) => {
          try {
            const res = await fetch(url, {
              method: "POST",
              headers: { authorization: `Bearer ${dsn}`, "content-type": "application/json" },
              body: JSON.stringify(body),
            });
            return { status: res.status, body: await res.text() };
          } catch (err) {
            return { blocked: String(err) };
          }
        },
        { url: `${stack.ingestUrl}/raw/scores`, dsn, body },
      );
    } finally {
      await tab.close();
    }
  };
  const thumbsDown = {
    session_id: "chat-1",
    name: "thumbs",
    value: false,
    comment: "wrong size",
    idempotency_key: "fb-1",
  };

  // Before the trace exists; sent twice (a retry), from the allowed origin.
  expect(await sendFrom(allowed, thumbsDown)).toEqual({ status: 200, body: '{"status":"success"}' });
  expect(await sendFrom(allowed, thumbsDown)).toEqual({ status: 200, body: '{"status":"success"}' });
  // Another origin: the server refuses it; the 403 carries CORS headers (docs/ingestion.md), so the
  // page sees the refusal itself rather than an opaque network error (and an SDK does not retry).
  const refused = await sendFrom(other, { ...thumbsDown, idempotency_key: "fb-2" });
  expect(refused).toMatchObject({ status: 403 });
  const direct = await fetch(`${stack.ingestUrl}/raw/scores`, {
    method: "POST",
    headers: { authorization: `Bearer ${dsn}`, "content-type": "application/json", origin: other },
    body: JSON.stringify({ ...thumbsDown, idempotency_key: "fb-2" }),
  });
  expect(direct.status).toBe(403);

  const scoresOf = async () => {
    const r = await fetch(`${stack.platformUrl}/telemetry/otel/sessions/${SERVICE}/chat-1/scores`, {
      headers: { authorization: `Token ${tenant.platformKey}` },
    });
    return r.ok ? ((await r.json()) as any).scores : null;
  };
  const stored = await waitFor(async () => ((await scoresOf())?.length ? scoresOf() : null), { what: "the score" });
  expect(stored).toEqual([
    expect.objectContaining({
      name: "thumbs",
      value: false,
      source: "end_user",
      comment: "wrong size",
      idempotencyKey: "fb-1",
    }),
  ]);

  // The trace comes later, from the backend; the session row then carries the rollup.
  const trace = chatTrace({
    sessionId: "chat-1",
    serviceName: SERVICE,
    messages: [{ role: "user", content: "size?" }],
    reply: "M",
  });
  const res = await fetch(`${stack.ingestUrl}/raw/traces`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify(trace),
  });
  expect(res.status).toBe(200);
  const row = await waitFor(
    async () => {
      const r = await fetch(`${stack.platformUrl}/telemetry/otel/sessions/filtered`, {
        method: "POST",
        headers: { authorization: `Token ${tenant.platformKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          serviceName: SERVICE,
          filters: [{ field: "scores.thumbs", operator: "lt", value: 0.5 }],
        }),
      });
      const body = r.ok ? ((await r.json()) as any) : null;
      return body?.sessions?.[0];
    },
    { what: "the scored session", timeoutMs: 30_000 },
  );
  expect(row).toMatchObject({ sessionId: "chat-1", scores: { thumbs: { count: 1, mean: 0 } } });
  expect((await database.sql`select 1 from scores where idempotency_key = 'fb-2'`).length).toBe(0);
}, 120_000);
