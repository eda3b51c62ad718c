/**
 * `bun run bench/sdk.ts`: what cellar-sdk costs, each figure beside a floor from the same run.
 *
 *  1. Caller-path overhead of a wrapped openai call (plain and streamed), p50/p99, beside the bare
 *     call (the floor): the real `openai` client with a fetch that answers at once, the SDK's
 *     queue never sending (only the caller's path is timed).
 *  2. Memory with 100,000 traces queued, beside the same JSON strings in a plain array (the
 *     floor), and with the default bounds (10,000 items / 32 MiB): bounded, drops counted.
 *  3. Ingest CPU per trace through /raw/batch against single /raw/traces posts: the real ingest
 *     app (main.ts) over a real nats-server and Postgres, beside a bare server that only parses
 *     the same JSON (the floor of each way).
 *
 *   bun run bench/sdk.ts [--calls 3000] [--traces 4000]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { randomBytes, toBase64 } from "@cellar/shared/crypto";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { Cellar } from "../sdks/typescript/src/index";
import { observeOpenAI } from "../sdks/typescript/src/openai";
import { startNatsServer } from "../scripts/infra/nats-server";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { stopChild } from "../scripts/infra/processes";
import { pct, procStat } from "./lib/proc";
import { makeTemplates } from "./lib/traces";

const ROOT = resolve(import.meta.dir, "..");

// Child mode: the floor of part 3. Parses what ingest parses (each trace's JSON) and answers.
if (process.argv[2] === "--bare-server") {
  Bun.serve({
    port: Number(process.argv[3]),
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = JSON.parse(await req.text());
      if (!body.items) return Response.json({ status: "success" });
      return Response.json({ status: "success", items: body.items.map(() => ({ status: "accepted" })) });
    },
  });
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: { calls: { type: "string", default: "3000" }, traces: { type: "string", default: "4000" } },
});
const CALLS = Number(args.calls);
const TRACES = Number(args.traces);
const us = (ms: number) => `${(ms * 1000).toFixed(1)} us`;
const DSN = `svc-ing-s-${Buffer.from(JSON.stringify({ v: 1, e: "http://127.0.0.1:9", s: "bench" })).toString("base64url")}.${"x".repeat(32)}`;
const never = (() => new Promise(() => {})) as unknown as typeof fetch;

// ---- 1. caller-path overhead ------------------------------------------------------------------
const completion = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-mini-2024-07-18",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Your order A-1042 shipped yesterday." },
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 812, completion_tokens: 12, total_tokens: 824 },
});
const sse = `${Array.from(
  { length: 20 },
  (_, i) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content: `w${i} ` }, finish_reason: i === 19 ? "stop" : null }] })}\n\n`,
).join("")}data: [DONE]\n\n`;
const provider = (async (_url: string, init: RequestInit) => {
  const stream = JSON.parse(String(init.body)).stream;
  return new Response(stream ? sse : completion, {
    headers: { "content-type": stream ? "text/event-stream" : "application/json" },
  });
}) as unknown as typeof fetch;
const messages = JSON.parse(makeTemplates(1)[0]).request.messages;

async function timeCalls(client: OpenAI, stream: boolean, n: number): Promise<{ lat: number[]; cpuUs: number }> {
  const lat: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    if (stream) {
      const s = await client.chat.completions.create({ model: "gpt-4o-mini", messages, stream: true });
      for await (const _ of s);
    } else await client.chat.completions.create({ model: "gpt-4o-mini", messages });
    lat.push(performance.now() - t);
  }
  const c = process.cpuUsage(cpu);
  return { lat: lat.sort((a, b) => a - b), cpuUs: (c.user + c.system) / n };
}

async function overhead() {
  console.log(`\n1. caller-path overhead per call (${CALLS} calls each, alternating rounds; floor = the bare call)`);
  const cellar = new Cellar({
    dsn: DSN,
    serverless: true,
    fetch: never,
    maxQueueItems: 1_000_000,
    maxQueueBytes: 2 ** 31,
  });
  const bare = new OpenAI({ apiKey: "sk", fetch: provider, maxRetries: 0 });
  const wrapped = observeOpenAI(new OpenAI({ apiKey: "sk", fetch: provider, maxRetries: 0 }), cellar, {
    sessionId: "bench",
  });
  for (const stream of [false, true]) {
    await timeCalls(bare, stream, 300);
    await timeCalls(wrapped, stream, 300);
    const rounds = {
      bare: [] as number[],
      wrapped: [] as number[],
      bareCpu: [] as number[],
      wrappedCpu: [] as number[],
    };
    for (let r = 0; r < 8; r++) {
      const b = await timeCalls(bare, stream, CALLS / 8);
      const w = await timeCalls(wrapped, stream, CALLS / 8);
      rounds.bare.push(...b.lat);
      rounds.wrapped.push(...w.lat);
      rounds.bareCpu.push(b.cpuUs);
      rounds.wrappedCpu.push(w.cpuUs);
    }
    const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
    const [b, w] = [sorted(rounds.bare), sorted(rounds.wrapped)];
    const cpu = (xs: number[]) => sorted(xs)[xs.length >> 1];
    const kind = stream ? "streamed (20 chunks)" : "plain";
    console.log(
      `   ${kind.padEnd(21)} bare p50 ${us(pct(b, 50))} p99 ${us(pct(b, 99))} | wrapped p50 ${us(pct(w, 50))} p99 ${us(pct(w, 99))} | added p50 ${us(pct(w, 50) - pct(b, 50))}; CPU per call bare ${cpu(rounds.bareCpu).toFixed(1)} us, wrapped ${cpu(rounds.wrappedCpu).toFixed(1)} us (added ${(cpu(rounds.wrappedCpu) - cpu(rounds.bareCpu)).toFixed(1)} us)`,
    );
  }
  await sdkWorkAlone();
  const built = cellar.stats.dropped + (cellar as unknown as { transport: { pending: number } }).transport.pending;
  console.log(`   traces built by the wrapped calls: ${built.toLocaleString()} (at most 1,000 kept queued)`);
}

/**
 * The SDK's own work per call, with the provider client replaced by a stub answering at once
 * (floor: the same stub unwrapped): proxy, hooks, trace built, serialised and queued.
 */
async function sdkWorkAlone() {
  const parsed = JSON.parse(completion);
  const chunks = JSON.parse(
    `[${sse
      .split("\n\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => l.slice(6))
      .join(",")}]`,
  );
  const stub = {
    chat: {
      completions: {
        create(params: { stream?: boolean }) {
          if (!params.stream) return Promise.resolve(parsed);
          return Promise.resolve({
            iterator: async function* () {
              yield* chunks;
            },
            [Symbol.asyncIterator]() {
              return (this as { iterator: () => AsyncIterator<unknown> }).iterator();
            },
          });
        },
      },
    },
  };
  const cellar = new Cellar({ dsn: DSN, serverless: true, fetch: never, maxQueueItems: 1000 });
  const wrapped = observeOpenAI(stub, cellar, { sessionId: "bench" });
  const once = async (client: typeof stub, stream: boolean) => {
    const r: any = await client.chat.completions.create({ model: "gpt-4o-mini", messages, stream } as never);
    if (stream) for await (const _ of r);
  };
  console.log("   the SDK's work alone (the client replaced by a stub answering at once; floor: the stub unwrapped):");
  for (const stream of [false, true]) {
    const lat = { bare: [] as number[], wrapped: [] as number[] };
    for (let r = 0; r < 10; r++)
      for (const [name, client] of [
        ["bare", stub],
        ["wrapped", wrapped],
      ] as const)
        for (let i = 0; i < 1000; i++) {
          const t = performance.now();
          await once(client, stream);
          lat[name].push(performance.now() - t);
        }
    const [b, w] = [lat.bare.sort((x, y) => x - y), lat.wrapped.sort((x, y) => x - y)];
    console.log(
      `   ${(stream ? "streamed (20 chunks)" : "plain").padEnd(21)} stub p50 ${us(pct(b, 50))} p99 ${us(pct(b, 99))} | wrapped stub p50 ${us(pct(w, 50))} p99 ${us(pct(w, 99))}`,
    );
  }
}

// ---- 2. memory --------------------------------------------------------------------------------
function heapMb(): number {
  Bun.gc(true);
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function memory() {
  const N = 100_000;
  const templates = makeTemplates(50).map((t) => JSON.parse(t));
  const traceOf = (i: number) => ({ ...templates[i % 50], session_id: `mem-${i}` });
  console.log(`\n2. memory with ${N.toLocaleString()} traces queued (2-6 KB each)`);
  let base = heapMb();
  const floor: string[] = [];
  for (let i = 0; i < N; i++) floor.push(JSON.stringify(traceOf(i)));
  const floorMb = heapMb() - base;
  const chars = floor.reduce((n, s) => n + s.length, 0);
  floor.length = 0;
  base = heapMb();
  const all = new Cellar({ dsn: DSN, serverless: true, fetch: never, maxQueueItems: N, maxQueueBytes: 2 ** 31 });
  for (let i = 0; i < N; i++) all.trace(traceOf(i));
  const allMb = heapMb() - base;
  console.log(
    `   floor (the JSON strings in an array): ${floorMb.toFixed(0)} MB for ${(chars / 2 ** 20).toFixed(0)} M characters; SDK queue with room for all: ${allMb.toFixed(0)} MB (${all.stats.dropped} dropped)`,
  );
  await all.shutdown({ timeoutMs: 1 });
  base = heapMb();
  const bounded = new Cellar({ dsn: DSN, serverless: true, fetch: never });
  for (let i = 0; i < N; i++) bounded.trace(traceOf(i));
  console.log(
    `   default bounds (10,000 items / 32 MiB): ${(heapMb() - base).toFixed(0)} MB held, ${bounded.stats.dropped.toLocaleString()} newest dropped and counted`,
  );
}

// ---- 3. ingest CPU per trace ------------------------------------------------------------------
async function post(url: string, token: string, bodies: string[], concurrency: number): Promise<number> {
  let next = 0;
  let ok = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body,
        });
        const answer = await res.text();
        // A batch is 200 even when items are refused: count it only when all were accepted.
        if (res.status === 200 && !answer.includes('"refused"')) ok++;
        else console.error(`   ${res.status} ${answer.slice(0, 200)}`);
      }
    }),
  );
  return ok;
}

const cpuOf = (pids: number[]) => pids.reduce((n, p) => n + (procStat(p)?.own ?? 0), 0);

async function ingestCpu() {
  console.log(
    `\n3. server CPU per trace, ${TRACES} traces each way (ingest + nats-server; floor: a bare server parsing the JSON)`,
  );
  const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-sdk-"));
  const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
  const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
  const children: ChildProcess[] = [];
  try {
    await runMigrations(pg.url);
    const database = createDatabase(pg.url, { max: 2 });
    const tenant = await bootstrapTenant(database.db, { name: "bench" });
    const [ingestPort, barePort] = [await freePort(), await freePort()];
    const dsn = (
      await createApiKey(database.db, {
        kind: "dsn-server",
        tenantId: tenant.tenantId,
        serviceName: "support-bot",
        endpoint: `http://127.0.0.1:${ingestPort}`,
      })
    ).key;
    await database.close();
    const ingest = spawn(process.execPath, ["run", join(ROOT, "apps/ingest/src/main.ts")], {
      env: {
        ...process.env,
        NATS_URL: nats.url,
        DATABASE_URL: pg.url,
        INGEST_PORT: String(ingestPort),
        INGEST_GRPC_PORT: "0",
        SECRET_ENCRYPTION_KEY: toBase64(randomBytes(32)),
        INGEST_RATE_LIMIT_PER_SECOND: "0",
        LOG_LEVEL: "error",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const bare = spawn(process.execPath, ["run", import.meta.path, "--bare-server", String(barePort)], {
      stdio: "inherit",
    });
    children.push(ingest, bare);
    await Promise.all([waitForPort(ingestPort, 30_000), waitForPort(barePort, 30_000)]);
    const templates = makeTemplates(200);
    let seq = 0;
    const traces = () =>
      Array.from({ length: TRACES }, () => templates[seq % 200].replace("__SESSION__", `b-${seq++}`));
    const batches = (list: string[]) => {
      const out: string[] = [];
      for (let i = 0; i < list.length; i += 100)
        out.push(
          `{"items":[${list
            .slice(i, i + 100)
            .map((t) => `{"type":"trace","body":${t}}`)
            .join(",")}]}`,
        );
      return out;
    };
    const run = async (
      name: string,
      port: number,
      pids: number[],
      path: string,
      bodies: string[],
      concurrency: number,
    ) => {
      const before = cpuOf(pids);
      const ok = await post(`http://127.0.0.1:${port}${path}`, dsn, bodies, concurrency);
      const perTrace = ((cpuOf(pids) - before) * 1e6) / TRACES;
      console.log(
        `   ${name.padEnd(44)} ${perTrace.toFixed(1).padStart(7)} us/trace (${ok}/${bodies.length} requests 200)`,
      );
      return perTrace;
    };
    // Warm both servers, then measure.
    await post(`http://127.0.0.1:${ingestPort}/raw/batch`, dsn, batches(traces().slice(0, 500)), 4);
    await post(`http://127.0.0.1:${barePort}/raw/batch`, dsn, batches(traces().slice(0, 500)), 4);
    const pidsIngest = [ingest.pid!, nats.process.pid!];
    await run("floor: bare server, single posts", barePort, [bare.pid!], "/raw/traces", traces(), 16);
    const single = await run("ingest, single posts (/raw/traces)", ingestPort, pidsIngest, "/raw/traces", traces(), 16);
    await run("floor: bare server, batches of 100", barePort, [bare.pid!], "/raw/batch", batches(traces()), 4);
    const batched = await run(
      "ingest, batches of 100 (/raw/batch)",
      ingestPort,
      pidsIngest,
      "/raw/batch",
      batches(traces()),
      4,
    );
    console.log(`   batches cost ${(batched / single).toFixed(2)}x the CPU per trace of single posts`);
  } finally {
    for (const c of children) await stopChild(c, 5_000);
    await nats.stop();
    await pg.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await overhead();
await memory();
await ingestCpu();
process.exit(0);
