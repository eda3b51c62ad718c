/**
 * `npm run dev`, the README's first command, run as a user runs it (scripts/dev.ts, no watch):
 * its own nats-server with the deployed config and per-app users (or, with `--cluster`, three
 * nodes that include the same users.conf, streams at 3 replicas), its own embedded Postgres, the
 * four apps. A trace sent with the printed telemetry key comes back as a complete transcript
 * through the printed platform key, no app logs a NATS permission error, the processor, the
 * dispatcher and Postgres run at a lower priority than ingest, and Ctrl-C (SIGINT) stops every
 * process it started.
 */
import { afterEach, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { freePort } from "../scripts/infra/ports";
import { exportSpans, modelCallSpan } from "./helpers/genai-spans";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

const ROOT = resolve(import.meta.dir, "..");
let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function portAnswers(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) }).then(
    () => true,
    () => false,
  );
}

/** Each process `parent` started: its command line and its nice level relative to ours. */
function childrenOf(parent: number): Array<{ pid: number; command: string; level: number }> {
  const out: Array<{ pid: number; command: string; level: number }> = [];
  for (const pid of readdirSync("/proc").map(Number).filter(Boolean)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // The fields after "(comm) ": state, ppid, ...; nice is the line's field 19.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== parent) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      out.push({ pid, command, level: Number(fields[16]) - getPriority() });
    } catch {
      // gone between the listing and the read
    }
  }
  return out;
}

/** The distinct nice levels of dev's apps, nats-server(s), postmaster and the client backends it forked. */
function devLevels(devPid: number): Record<string, number[]> {
  const levels: Record<string, number[]> = {};
  const add = (name: string, level: number) => (levels[name] ??= []).push(level);
  for (const c of childrenOf(devPid)) {
    const name = c.command.match(/apps\/(\w+)\/src\/main\.ts/)?.[1] ?? c.command.split(" ")[0].split("/").pop()!;
    add(name, c.level);
    if (name === "postgres")
      for (const b of childrenOf(c.pid)) if (/\(\d+\)/.test(b.command)) add("postgres backends", b.level);
  }
  return Object.fromEntries(Object.entries(levels).map(([k, l]) => [k, [...new Set(l)].sort((a, b) => a - b)]));
}

async function startDev(args: string[], extraEnv: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "cellar-dev-"));
  const ports = {
    INGEST_PORT: await freePort(),
    PLATFORM_PORT: await freePort(),
    PROCESSOR_PORT: await freePort(),
    DISPATCHER_PORT: await freePort(),
  };
  // The suite's own NATS_URL / DATABASE_URL would make dev use them: a new user has neither.
  const { NATS_URL: _n, DATABASE_URL: _d, ...env } = process.env;
  const child: ChildProcess = spawn(process.execPath, ["run", join(ROOT, "scripts/dev.ts"), "--no-watch", ...args], {
    env: {
      ...env,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      CELLAR_DEV_DATA_DIR: dir,
      MATURATION_WINDOW_SECONDS: "1",
      LOG_LEVEL: "warn",
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (c) => (output += c));
  child.stderr!.on("data", (c) => (output += c));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGINT");
      await Promise.race([exited, Bun.sleep(20_000)]);
    }
    rmSync(dir, { recursive: true, force: true });
  });
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`dev exited ${child.exitCode}:\n${output}`);
      return output.includes("Ctrl-C stops everything");
    },
    { what: `dev's banner\n${output}`, timeoutMs: 120_000, intervalMs: 250 },
  );
  // The banner comes as the apps are spawned: wait until each says it is ready.
  for (const port of Object.values(ports)) {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => null))?.status === 200, {
      what: `/ready on ${port}\n${output}`,
      timeoutMs: 60_000,
      intervalMs: 250,
    });
  }
  const state = JSON.parse(readFileSync(join(dir, "dev.json"), "utf8"));
  const natsUrl = output.match(/NATS\s+(\S+)/)![1];
  return { child, exited, ports, state, natsUrl, output: () => output };
}

async function traceComesBack(dev: Awaited<ReturnType<typeof startDev>>, sessionId: string) {
  const ingest = await fetch(`http://127.0.0.1:${dev.ports.INGEST_PORT}/raw/traces`, {
    method: "POST",
    headers: { authorization: `Bearer ${dev.state.tenant.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify(
      chatTrace({
        sessionId,
        serviceName: "demo-app",
        messages: [{ role: "user", content: "Hi there" }],
        reply: "Hello!",
      }),
    ),
  });
  expect({ status: ingest.status, body: await ingest.json() }).toEqual({ status: 200, body: { status: "success" } });
  return waitFor(
    async () => {
      const r = await fetch(
        `http://127.0.0.1:${dev.ports.PLATFORM_PORT}/api/v1/telemetry/otel/sessions/demo-app/${sessionId}/transcript`,
        {
          headers: { authorization: `Token ${dev.state.tenant.platformKey}` },
        },
      );
      const body =
        r.status === 200
          ? ((await r.json()) as { status: string; items: Array<{ type: string; content: string }> })
          : null;
      return body?.status === "complete" ? body : null;
    },
    { what: "a complete transcript", timeoutMs: 60_000, intervalMs: 250 },
  );
}

async function stopsEverything(dev: Awaited<ReturnType<typeof startDev>>) {
  dev.child.kill("SIGINT");
  expect(await Promise.race([dev.exited, Bun.sleep(30_000).then(() => "still running")])).toBe(0);
  for (const port of Object.values(dev.ports))
    expect({ port, answers: await portAnswers(port) }).toEqual({ port, answers: false });
  for (const url of dev.natsUrl.split(",")) {
    const reachable = await connect({ servers: url, reconnect: false, timeout: 1_000 }).then(
      (nc) => nc.close().then(() => true),
      () => false,
    );
    expect({ url, reachable }).toEqual({ url, reachable: false });
  }
}

test("npm run dev: one server with the deployed NATS users; a trace comes back as a transcript; the processor, the dispatcher and Postgres run 10 nice levels below ingest; Ctrl-C stops it all", async () => {
  const dev = await startDev([]);
  const transcript = await traceComesBack(dev, "hello-1");
  expect(transcript.items.map((i) => [i.type, i.content])).toEqual([
    ["user", "Hi there"],
    ["assistant", "Hello!"],
  ]);
  // The banner's OTLP/gRPC endpoint takes the SDK's gRPC exporter with the printed key.
  const grpcEndpoint = dev.output().match(/OTLP\/gRPC\s+(http:\/\/127\.0\.0\.1:\d+)/)![1];
  const call = {
    sessionId: "hello-grpc",
    system: "Be brief.",
    user: "Over gRPC?",
    answer: "Yes.",
    inputTokens: 5,
    outputTokens: 2,
  };
  const spans = [modelCallSpan("genai", "openai", call)];
  const credential = dev.state.tenant.telemetryKey;
  expect(
    await exportSpans({ url: grpcEndpoint, credential, encoding: "grpc", serviceName: "demo-app", spans }),
  ).toEqual({
    rejected: 0,
  });
  // The deployed config is in force: without a user the server refuses the connection.
  await expect(connect({ servers: dev.natsUrl, reconnect: false, timeout: 2_000 })).rejects.toThrow(/authorization/i);
  expect(dev.output()).not.toMatch(/permissions? violation/i);
  // Ingest first for a core (CELLAR_DEV_DOWNSTREAM_NICE, default 10): the processor, the
  // dispatcher and Postgres with every backend it forked for a client run 10 levels lower.
  const low = Math.min(19, getPriority() + 10) - getPriority();
  expect(devLevels(dev.child.pid!)).toEqual({
    "nats-server": [0],
    ingest: [0],
    platform: [0],
    processor: [low],
    dispatcher: [low],
    postgres: [low],
    "postgres backends": [low],
  });
  await stopsEverything(dev);
}, 240_000);

test("npm run dev -- --cluster: three nodes with the same NATS users, every stream at 3 replicas; a trace comes back; CELLAR_DEV_DOWNSTREAM_NICE=0 keeps every process at one priority; Ctrl-C stops it all", async () => {
  const dev = await startDev(["--cluster"], { CELLAR_DEV_DOWNSTREAM_NICE: "0" });
  expect(dev.natsUrl.split(",")).toHaveLength(3);
  const transcript = await traceComesBack(dev, "hello-cluster");
  expect(transcript.items.map((i) => [i.type, i.content])).toEqual([
    ["user", "Hi there"],
    ["assistant", "Hello!"],
  ]);
  for (const url of dev.natsUrl.split(","))
    await expect(connect({ servers: url, reconnect: false, timeout: 2_000 })).rejects.toThrow(/authorization/i);
  const admin = await connect({ servers: dev.natsUrl.split(","), user: "admin", pass: dev.state.natsPasswords.admin });
  try {
    const jsm = await jetstreamManager(admin);
    const replicas: Record<string, number> = {};
    for await (const s of jsm.streams.list()) replicas[s.config.name] = s.config.num_replicas;
    expect(Object.keys(replicas).length).toBeGreaterThanOrEqual(4);
    expect(new Set(Object.values(replicas))).toEqual(new Set([3]));
  } finally {
    await admin.close();
  }
  expect(dev.output()).not.toMatch(/permissions? violation/i);
  expect(devLevels(dev.child.pid!)).toEqual({
    "nats-server": [0],
    ingest: [0],
    platform: [0],
    processor: [0],
    dispatcher: [0],
    postgres: [0],
    "postgres backends": [0],
  });
  await stopsEverything(dev);
}, 240_000);
