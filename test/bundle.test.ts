// The apps bundled into one file each (scripts/bundle.ts; docs/operations.md "Start-up"), run as
// processes the way the source is: ingest as a one-file bundle (`bun main.js`, the migrations and
// its `.proto` files beside it), the processor and dispatcher as compiled executables with bytecode
// (their setup run apart, SETUP_ON_START=false, as compose runs them); the platform from source (it
// builds the dashboard from web/ at run time, which a bundle does not carry). A trace in over HTTP
// comes out as a complete transcript and a signed webhook. It fails when an app cannot be bundled
// (a module imported by a path computed at run time, as the detector registry once did) or reads a
// file the bundle does not carry.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { waitForPort } from "../scripts/infra/ports";
import { bundleApps } from "../scripts/bundle";
import { type AppProcesses, startAppProcesses } from "./helpers/app-processes";
import { run, type Running } from "./helpers/compose";
import { createTestDatabase } from "./helpers/infra";
import { startReceiver, traceThroughApps } from "./helpers/trace-through";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: AppProcesses;
let dist = "";
const compiled: Running[] = [];
let receiver: ReturnType<typeof startReceiver>;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), "cellar-bundle-"));
  const built = bundleApps(dist, { compiled: true, apps: ["ingest", "processor", "dispatcher"] });
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 2 });
  receiver = startReceiver();
  stack = await startAppProcesses(testDb.url, ["platform"]);
  // Ingest's bundle, with the setup on start (the migrations beside the bundle).
  const ingest = await stack.start("ingest", { script: built.ingest.bundle[1] });
  await waitForPort(Number(stack.env.INGEST_PORT), 60_000).catch((err) => {
    throw new Error(`bundled ingest did not listen: ${err}\n${ingest.output()}`);
  });
  // The compiled processor and dispatcher: their modules live in the executable, so the setup
  // runs apart (done above by ingest's start).
  for (const app of ["processor", "dispatcher"] as const)
    compiled.push(run(`${app}-bin`, built[app].compiled!, { ...stack.env, SETUP_ON_START: "false" }));
}, 180_000);

afterAll(async () => {
  for (const p of compiled) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
  }
  await stack?.stop();
  receiver?.stop();
  await database?.close();
  await testDb?.drop();
  if (dist) rmSync(dist, { recursive: true, force: true });
});

test("bundled ingest, compiled processor and dispatcher: a trace in over HTTP, a complete transcript and a signed webhook out", async () => {
  const tenant = await bootstrapTenant(database.db, { name: "bundled", webhooks: true });
  const { subscription, transcript, delivery } = await traceThroughApps({
    sql: database.sql,
    ingestUrl: stack.ingestUrl,
    platformUrl: stack.platformUrl,
    tenant,
    serviceName: "bundled-app",
    sessionId: "b-1",
    receiver,
  });
  expect(transcript.items.map((i: { content: string }) => i.content)).toEqual(["ping", "pong"]);
  expect(new Webhook(subscription.secret).verify(delivery.body, delivery.headers)).toMatchObject({
    type: "session.matured",
    data: { session_id: "b-1", service_name: "bundled-app" },
  });
}, 90_000);
