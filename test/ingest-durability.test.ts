import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, type RunningNats } from "../scripts/infra/nats-server";
import { connectNats, createTopology, ensureTopology, type NatsHandles } from "@cellar/shared/nats/topology";
import { createIngestFixture, type IngestFixture } from "../apps/ingest/test/fixture";
import { watchConnection } from "../apps/ingest/src/publish";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

// A nats-server of our own: this file kills it, and must not touch the one other tests share.
let fx: IngestFixture;
let dir: string;
let server: RunningNats;
let nats: NatsHandles;
let app: ReturnType<IngestFixture["build"]>;
let connection: { connected: () => boolean };

beforeAll(async () => {
  fx = await createIngestFixture();
  dir = mkdtempSync(join(tmpdir(), "cellar-ingest-durability-"));
  server = await startNatsServer({ storeDir: join(dir, "nats"), quiet: true });
  const nc = await connectNats(server.url, "ingest-durability");
  nats = await ensureTopology(nc, createTopology("dur"));
  connection = watchConnection(nc);
  app = fx.build({ js: nats.js, topology: nats.topology, publishTimeoutMs: 1_000, connected: connection.connected });
});

afterAll(async () => {
  await nats?.nc.close().catch(() => {});
  await server?.stop();
  await fx?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** SIGSTOP takes effect asynchronously: wait until the kernel reports the server stopped. */
async function pauseServer() {
  server.process.kill("SIGSTOP");
  await waitFor(async () => readFileSync(`/proc/${server.process.pid}/stat`, "utf8").split(") ")[1].startsWith("T"), {
    intervalMs: 5,
    what: "nats-server stopped",
  });
}

type Outcome = { sessionId: string; status: number; retryAfter: string | null };

/** Keeps `workers` requests in flight, each with a unique session id, until stopped. */
function load(workers: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const sessionId = `s-${crypto.randomUUID()}`;
      const body = chatTrace({ sessionId, messages: [{ role: "user", content: "hi" }], reply: "hello" });
      const res = await fx.post("/raw/traces", body, {}, app);
      outcomes.push({ sessionId, status: res.status, retryAfter: res.headers.get("retry-after") });
      if (res.status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    outcomes,
    count: (status: number) => outcomes.filter((o) => o.status === status).length,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function storedSessionIds(): Promise<Set<string>> {
  const info = await nats.jsm.streams.info(nats.topology.ingestStream);
  const ids = new Set<string>();
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await nats.jsm.streams.getMessage(nats.topology.ingestStream, { seq }).catch(() => null);
    if (m) ids.add(m.json<{ payload: { session_id: string } }>().payload.session_id);
  }
  return ids;
}

test("NATS killed mid-stream: 503 with Retry-After while it is down, never a 200 for unstored data", async () => {
  const traffic = load(8);
  await waitFor(async () => traffic.count(200) >= 50, { what: "traffic flowing" });

  expect(connection.connected()).toBe(true);
  server.process.kill("SIGKILL");
  const okBeforeKill = traffic.count(200);
  // The app learns of the loss and refuses at once instead of waiting out publish timeouts.
  await waitFor(async () => !connection.connected(), { what: "the connection watcher to notice" });
  await waitFor(async () => traffic.count(503) >= 20, { timeoutMs: 20_000, what: "503s while NATS is down" });

  server = await startNatsServer({ storeDir: join(dir, "nats"), port: server.port, quiet: true });
  await waitFor(async () => connection.connected(), { timeoutMs: 20_000, what: "reconnect" });
  const okAfterRestart = traffic.count(200);
  await waitFor(async () => traffic.count(200) >= okAfterRestart + 50, {
    timeoutMs: 30_000,
    what: "traffic resuming after restart",
  });
  await traffic.stop();

  expect(okBeforeKill).toBeGreaterThan(0);
  const failures = traffic.outcomes.filter((o) => o.status !== 200);
  expect(failures.length).toBeGreaterThan(0);
  for (const f of failures) expect(f).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) });

  const stored = await storedSessionIds();
  const answeredOk = traffic.outcomes.filter((o) => o.status === 200).map((o) => o.sessionId);
  const okButMissing = answeredOk.filter((id) => !stored.has(id));
  expect(okButMissing).toEqual([]);
}, 90_000);

test("JetStream unresponsive (server paused): 503 after the publish timeout, then recovery", async () => {
  const body = () =>
    chatTrace({ sessionId: `p-${crypto.randomUUID()}`, messages: [{ role: "user", content: "hi" }], reply: "hello" });
  expect((await fx.post("/raw/traces", body(), {}, app)).status).toBe(200);
  await pauseServer();
  try {
    const paused = body();
    const res = await fx.post("/raw/traces", paused, {}, app);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect((await res.json()).error).toContain("retry");
  } finally {
    server.process.kill("SIGCONT");
  }
  await waitFor(async () => (await fx.post("/raw/traces", body(), {}, app)).status === 200, {
    what: "publishing again after SIGCONT",
  });
}, 30_000);

test("a retry of a body first answered 503 is stored once when it finally succeeds", async () => {
  const body = chatTrace({
    sessionId: `r-${crypto.randomUUID()}`,
    messages: [{ role: "user", content: "hi" }],
    reply: "hello",
  });
  await pauseServer();
  let first: Response;
  try {
    first = await fx.post("/raw/traces", body, {}, app);
  } finally {
    server.process.kill("SIGCONT");
  }
  expect(first.status).toBe(503);
  // The paused publish reaches the server after SIGCONT; the client's retry must not store a second copy.
  await waitFor(async () => (await fx.post("/raw/traces", body, {}, app)).status === 200, { what: "retry succeeding" });
  expect((await fx.post("/raw/traces", body, {}, app)).status).toBe(200);
  const ids = [...(await storedSessionIds())];
  const info = await nats.jsm.streams.info(nats.topology.ingestStream);
  expect(ids.filter((id) => id === body.session_id).length).toBe(1);
  expect(info.state.messages).toBe(ids.length);
}, 30_000);
