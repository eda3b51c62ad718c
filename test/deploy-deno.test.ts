/**
 * The design card's promise: the apps run on Deno too. The compose stack with all four apps
 * under `deno run` (Deno from the `deno` npm package, installed by this test when missing) and
 * the first end-to-end path through it: trace in, transcript out, webhook received. Only the
 * HTTP serving differs by runtime (shared/ops/serve.ts). Relative imports in apps/ and shared/
 * name their `.ts` file, so no unstable Deno flag is needed (deno.json sets only nodeModulesDir).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { ROOT } from "./helpers/compose";
import { findDeno } from "../scripts/infra/deno";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase } from "@cellar/shared/db/client";
import {
  APP_PORTS,
  GRPC_PORT,
  startComposeStack,
  startReceiver,
  traceThrough,
  type ComposeStack,
} from "./helpers/compose-stack";
import { exportSpans, modelCallSpan } from "./helpers/genai-spans";
import { waitFor } from "./helpers/stack";

let stack: ComposeStack;
const receiver = startReceiver();
let deno: string;

beforeAll(async () => {
  deno = findDeno();
  stack = await startComposeStack({
    // The image runs `bun run apps/<app>/src/main.ts`; here the same file runs under Deno.
    appArgv: (argv) => (argv[argv.length - 1].startsWith("apps/") ? [deno, "run", "-A", argv[argv.length - 1]] : argv),
  });
}, 300_000);
afterAll(async () => {
  receiver.stop();
  await stack?.stop();
});

test("all four apps run under Deno and answer /ready", async () => {
  for (const [app, port] of Object.entries(APP_PORTS)) {
    const proc = stack.running.get(app)!;
    expect(proc.child.spawnargs[0]).toBe(deno);
    const ready = await fetch(stack.url(port, "/ready"));
    expect({ app, status: ready.status }).toEqual({ app, status: 200 });
  }
});

test("under Deno, a trace becomes a complete transcript and a signed session.matured webhook", async () => {
  const { ingestAnswer, transcript, webhookType } = await traceThrough(stack, receiver, "deno-1");
  expect(ingestAnswer).toEqual({ status: "success" });
  expect(transcript.items.map((i: { type: string; content: string }) => [i.type, i.content])).toEqual([
    ["user", "Is the stack up?"],
    ["assistant", "It is."],
  ]);
  expect(webhookType).toBe("session.matured");
}, 90_000);

test("under Deno, handlers see the client address as under Bun (Deno.serve's remoteAddr behind server.requestIP)", () => {
  const r = spawnSync(deno, ["run", "-A", "test/fixtures/serve-client-ip.ts"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).toEqual({ ip: "127.0.0.1" });
}, 90_000);

test("under Deno, the OTLP/gRPC door stores what the SDK's gRPC exporter sends and refuses a bad token", async () => {
  const owner = createDatabase(stack.pg.databaseUrl("cellar"), { max: 1 });
  const tenant = await bootstrapTenant(owner.db, { name: "deno-grpc" }).finally(() => owner.close());
  const c = {
    sessionId: "deno-grpc-1",
    system: "Be brief.",
    user: "Is the gRPC door up?",
    answer: "It is.",
    inputTokens: 12,
    outputTokens: 3,
  };
  const send = (credential: string) =>
    exportSpans({
      url: `http://127.0.0.1:${stack.local.port(GRPC_PORT)}`,
      credential,
      encoding: "grpc",
      serviceName: "deno-grpc",
      spans: [modelCallSpan("openllmetry", "anthropic", c)],
    });
  expect(await send(`${tenant.telemetryKey.slice(0, -4)}zzzz`).catch((err) => err.code)).toBe(16); // UNAUTHENTICATED
  expect(await send(tenant.telemetryKey)).toEqual({ rejected: 0 });
  const transcript = await waitFor(
    async () => {
      const r = await fetch(
        stack.url(APP_PORTS.platform, `/api/v1/telemetry/otel/sessions/deno-grpc/${c.sessionId}/transcript`),
        {
          headers: { authorization: `Token ${tenant.platformKey}` },
        },
      );
      const body = r.status === 200 ? await r.json() : null;
      return body?.status === "complete" ? body : null;
    },
    { what: "the gRPC session's complete transcript", timeoutMs: 30_000 },
  );
  expect(transcript.items.map((i: { type: string; content: string }) => [i.type, i.content])).toEqual([
    ["system", c.system],
    ["user", c.user],
    ["assistant", c.answer],
  ]);
}, 90_000);

test("under Deno, TLS on the gRPC listener is refused at start naming the variable (Deno's node:http2 cannot serve it)", () => {
  const script = `import { loadConfig } from "./shared/config.ts"; try { loadConfig(); } catch (e) { console.log(e.message); }`;
  const r = spawnSync(deno, ["eval", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
    env: {
      ...process.env,
      SECRET_ENCRYPTION_KEY: btoa("cellar-test-secret-key-32-bytes!"),
      INGEST_GRPC_TLS_CERT_FILE: "deno.json",
      INGEST_GRPC_TLS_KEY_FILE: "deno.json",
    },
  });
  expect(r.stdout).toContain(
    "invalid INGEST_GRPC_TLS_CERT_FILE: TLS on the OTLP/gRPC listener is not available under Deno",
  );
}, 90_000);
