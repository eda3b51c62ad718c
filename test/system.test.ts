// The four apps as real processes (how containers run them): HTTP in, signed webhook out,
// clean exit on SIGTERM.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { type AppProcesses, startAppProcesses } from "./helpers/app-processes";
import { createTestDatabase } from "./helpers/infra";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: AppProcesses;
let ingestUrl = "";
let platformUrl = "";
let receiver: ReturnType<typeof Bun.serve>;
const received: Array<{ headers: Record<string, string>; body: string }> = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 2 });
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      received.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response("ok");
    },
  });
  stack = await startAppProcesses(testDb.url, ["ingest", "platform", "processor", "dispatcher"]);
  ingestUrl = stack.ingestUrl;
  platformUrl = stack.platformUrl;
});

afterAll(async () => {
  await stack?.stop();
  receiver?.stop(true);
  await database.close();
  await testDb.drop();
});

test("trace in over HTTP, transcript and signed webhook out, every app exits cleanly on SIGTERM", async () => {
  for (const url of [`${ingestUrl}/health`, `${platformUrl.replace("/api/v1", "")}/health`]) {
    expect((await fetch(url)).status).toBe(200);
  }
  const tenant = await bootstrapTenant(database.db, { name: "sys", webhooks: true });
  const trace = chatTrace({
    sessionId: "sys-1",
    serviceName: "sys-app",
    messages: [{ role: "user", content: "ping" }],
    reply: "pong",
  });

  // The service exists after first ingest; subscribe before the session can mature.
  const first = await fetch(`${ingestUrl}/raw/traces`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify({ ...trace, session_id: "warmup" }),
  });
  expect(first.status).toBe(200);
  const [svc] = await waitFor(async () => {
    const rows = await database.sql<{ id: string }[]>`select id from trace_services where name = 'sys-app'`;
    return rows.length ? rows : null;
  });
  const created = await fetch(`${platformUrl}/webhooks`, {
    method: "POST",
    headers: { authorization: `Token ${tenant.platformKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      trace_service_id: svc.id,
      name: "local",
      url: `http://127.0.0.1:${receiver.port}/hook`,
      event_types: ["session.matured"],
    }),
  });
  expect(created.status).toBeLessThan(300);
  const subscription = await created.json();
  expect(subscription.secret).toStartWith("whsec_");

  const res = await fetch(`${ingestUrl}/raw/traces`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify(trace),
  });
  expect(res.status).toBe(200);

  const transcript = await waitFor(
    async () => {
      const r = await fetch(`${platformUrl}/telemetry/otel/sessions/sys-app/sys-1/transcript`, {
        headers: { authorization: `Token ${tenant.platformKey}` },
      });
      const body = r.ok ? await r.json() : null;
      return body?.status === "complete" ? body : null;
    },
    { what: "complete transcript", timeoutMs: 30_000 },
  );
  expect(transcript.items.map((i: any) => i.content)).toEqual(["ping", "pong"]);

  const delivery = await waitFor(async () => received.find((r) => JSON.parse(r.body).data?.session_id === "sys-1"), {
    what: "webhook for sys-1",
    timeoutMs: 30_000,
  });
  const verified = new Webhook(subscription.secret).verify(delivery.body, delivery.headers) as any;
  expect(verified).toMatchObject({
    type: "session.matured",
    data: { session_id: "sys-1", service_name: "sys-app", maturation_count: 1, tenant_id: tenant.tenantId },
  });

  const exits = await stack.stop("SIGTERM");
  expect(exits).toEqual([0, 0, 0, 0]);
});
