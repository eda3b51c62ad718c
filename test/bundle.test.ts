// The apps bundled into one file each (scripts/bundle.ts; docs/operations.md "Start-up"), run as
// processes the way the source is: ingest as a one-file bundle (`bun main.js`, the migrations and
// its `.proto` files beside it), the processor and dispatcher as compiled executables with bytecode
// (their setup run apart, SETUP_ON_START=false, as compose runs them); the platform from source (it
// builds the dashboard from web/ at run time, which a bundle does not carry). A trace in over HTTP
// comes out as a complete transcript and a signed webhook. It fails when an app cannot be bundled
// (a module imported by a path computed at run time, as the detector registry once did) or reads a
// file the bundle does not carry.
import { afterAll, beforeAll, expect, test } from "bun:test";
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
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: AppProcesses;
let dist = "";
const compiled: Running[] = [];
let receiver: ReturnType<typeof Bun.serve>;
const received: string[] = [];

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), "cellar-bundle-"));
  const built = bundleApps(dist, { compiled: true, apps: ["ingest", "processor", "dispatcher"] });
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 2 });
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      received.push(await req.text());
      return new Response("ok");
    },
  });
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
  receiver?.stop(true);
  await database?.close();
  await testDb?.drop();
  if (dist) rmSync(dist, { recursive: true, force: true });
});

test("bundled ingest, compiled processor and dispatcher: a trace in over HTTP, a complete transcript and a signed webhook out", async () => {
  const tenant = await bootstrapTenant(database.db, { name: "bundled", webhooks: true });
  const trace = chatTrace({
    sessionId: "b-1",
    serviceName: "bundled-app",
    messages: [{ role: "user", content: "ping" }],
    reply: "pong",
  });
  const post = (body: unknown) =>
    fetch(`${stack.ingestUrl}/raw/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.telemetryKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  expect((await post({ ...trace, session_id: "warmup" })).status).toBe(200);
  const [svc] = await waitFor(
    async () => {
      const rows = await database.sql<{ id: string }[]>`select id from trace_services where name = 'bundled-app'`;
      return rows.length ? rows : null;
    },
    { what: "the service stored by the compiled processor", timeoutMs: 30_000 },
  );
  const created = await fetch(`${stack.platformUrl}/webhooks`, {
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
  expect((await post(trace)).status).toBe(200);
  const transcript = await waitFor(
    async () => {
      const r = await fetch(`${stack.platformUrl}/telemetry/otel/sessions/bundled-app/b-1/transcript`, {
        headers: { authorization: `Token ${tenant.platformKey}` },
      });
      const body = r.ok ? await r.json() : null;
      return body?.status === "complete" ? body : null;
    },
    { what: "a complete transcript", timeoutMs: 30_000 },
  );
  expect(transcript.items.map((i: { content: string }) => i.content)).toEqual(["ping", "pong"]);
  await waitFor(async () => received.find((b) => JSON.parse(b).data?.session_id === "b-1"), {
    what: "the webhook for b-1 from the compiled dispatcher",
    timeoutMs: 30_000,
  });
}, 90_000);
