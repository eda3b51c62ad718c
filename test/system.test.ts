// The four apps as real processes (how containers run them): HTTP in, signed webhook out,
// clean exit on SIGTERM.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { type AppProcesses, startAppProcesses } from "./helpers/app-processes";
import { createTestDatabase } from "./helpers/infra";
import { startReceiver, traceThroughApps } from "./helpers/trace-through";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: AppProcesses;
let receiver: ReturnType<typeof startReceiver>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 2 });
  receiver = startReceiver();
  stack = await startAppProcesses(testDb.url, ["ingest", "platform", "processor", "dispatcher"]);
});

afterAll(async () => {
  await stack?.stop();
  receiver?.stop();
  await database.close();
  await testDb.drop();
});

test("trace in over HTTP, transcript and signed webhook out, every app exits cleanly on SIGTERM", async () => {
  for (const url of [`${stack.ingestUrl}/health`, `${stack.platformUrl.replace("/api/v1", "")}/health`]) {
    expect((await fetch(url)).status).toBe(200);
  }
  const tenant = await bootstrapTenant(database.db, { name: "sys", webhooks: true });
  const { subscription, transcript, delivery } = await traceThroughApps({
    sql: database.sql,
    ingestUrl: stack.ingestUrl,
    platformUrl: stack.platformUrl,
    tenant,
    serviceName: "sys-app",
    sessionId: "sys-1",
    receiver,
  });
  expect(subscription.secret).toStartWith("whsec_");
  expect(transcript.items.map((i: any) => i.content)).toEqual(["ping", "pong"]);
  const verified = new Webhook(subscription.secret).verify(delivery.body, delivery.headers) as any;
  expect(verified).toMatchObject({
    type: "session.matured",
    data: { session_id: "sys-1", service_name: "sys-app", maturation_count: 1, tenant_id: tenant.tenantId },
  });

  const exits = await stack.stop("SIGTERM");
  expect(exits).toEqual([0, 0, 0, 0]);
});
