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
import { APP_PORTS, startComposeStack, startReceiver, traceThrough, type ComposeStack } from "./helpers/compose-stack";

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
