import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { setupServer } from "msw/node";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { costOf } from "@cellar/shared/pricing/table";
import { findDeno } from "../scripts/infra/deno";
import { freePort } from "../scripts/infra/ports";
import { Cellar, type CellarError } from "../sdks/typescript/src/index";
import { observeAnthropic } from "../sdks/typescript/src/anthropic";
import { observeOpenAI } from "../sdks/typescript/src/openai";
import { startSdkApps } from "./helpers/sdk-apps";
import { type Conversation, converse, STYLES } from "./helpers/sdk-conversations";
import { providerHandlers } from "./helpers/sdk-providers";
import { waitFor } from "./helpers/stack";
import { platformClient } from "./helpers/platform-client";

// cellar-sdk against the apps as separate processes: DSN-only configuration, the wrappers over
// the real provider clients (msw fakes their APIs), and the transport's faults.
const msw = setupServer(...providerHandlers);
let apps: Awaited<ReturnType<typeof startSdkApps>>;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let dsn: string;
const SDK = join(import.meta.dir, "../sdks/typescript");

beforeAll(async () => {
  apps = await startSdkApps();
  tenant = await bootstrapTenant(apps.database.db, { name: "sdk-e2e" });
  dsn = (
    await createApiKey(apps.database.db, {
      kind: "dsn-server",
      tenantId: tenant.tenantId,
      serviceName: "sdk-bot",
      endpoint: apps.ingestUrl,
    })
  ).key;
  msw.listen({ onUnhandledRequest: "bypass" });
});
afterAll(async () => {
  msw.close();
  await apps?.stop();
});

const platform = async (path: string) => {
  const r = await platformClient(apps.platformUrl, tenant.platformKey).call(path);
  return r.status === 200 ? r.body : null;
};

/** Rows of the events table for this tenant, by their `n` attribute. */
async function eventCounts(prefix: string): Promise<Map<number, number>> {
  const rows = await apps.database.sql<{ n: string; c: number }[]>`
    select attributes->>'n' as n, count(*)::int as c from events
    where tenant_id = ${tenant.tenantId} and session_id like ${`${prefix}%`} group by 1`;
  return new Map(rows.map((r) => [Number(r.n), r.c]));
}

describe("cellar-sdk against the apps as processes", () => {
  test("many sessions with tool loops: transcripts, tokens and cost equal to the bare calls", async () => {
    const errors: CellarError[] = [];
    const cellar = new Cellar({ dsn, onError: (e) => errors.push(e) });
    expect(cellar.endpoint).toBe(apps.ingestUrl);
    const sessions: Array<{ id: string; expected: Conversation }> = [];
    const bare = { openai: new OpenAI({ apiKey: "sk-test" }), anthropic: new Anthropic({ apiKey: "sk-ant-test" }) };
    for (let round = 0; round < 3; round++)
      for (const style of STYLES) {
        const id = `e2e-${style}-${round}`;
        const clients = {
          openai: observeOpenAI(new OpenAI({ apiKey: "sk-test" }), cellar, { sessionId: id }),
          anthropic: observeAnthropic(new Anthropic({ apiKey: "sk-ant-test" }), cellar, { sessionId: id }),
        };
        const [got, expected] = [await converse(style, clients), await converse(style, bare)];
        expect(got.returned).toEqual(expected.returned);
        sessions.push({ id, expected });
      }
    const calls = sessions.reduce((n, s) => n + s.expected.usage.length, 0);
    expect(await cellar.shutdown()).toMatchObject({ sent: calls, refused: 0, dropped: 0, pending: 0 });
    expect(errors).toEqual([]);
    for (const { id, expected } of sessions) {
      const transcript = await waitFor(
        async () => {
          const t = await platform(`/telemetry/otel/sessions/sdk-bot/${id}/transcript`);
          return t?.status === "complete" ? t : null;
        },
        { what: `complete transcript of ${id}`, timeoutMs: 60_000 },
      );
      expect(transcript.items.map((i: any) => [i.type, i.content])).toEqual(expected.transcript);
      const { metrics } = await platform(`/telemetry/metrics/session/sdk-bot/${id}`);
      const sum = (k: "promptTokens" | "completionTokens") => expected.usage.reduce((n, u) => n + u[k], 0);
      const cost = expected.usage.reduce((n, u) => n + (costOf(u.model, u) ?? Number.NaN), 0);
      expect(metrics).toMatchObject({
        modelCalls: expected.usage.length,
        promptTokens: sum("promptTokens"),
        completionTokens: sum("completionTokens"),
      });
      expect(metrics.costUsd).toBeCloseTo(cost, 9);
    }
  });

  test("ingest killed and restarted mid-run: everything sent before flush() resolved is stored exactly once", async () => {
    const cellar = new Cellar({
      dsn,
      flushIntervalMs: 20,
      maxBatchItems: 10,
      retryBaseMs: 100,
      retryMaxMs: 2000,
      maxRetries: 30,
    });
    const total = 200;
    for (let n = 0; n < total; n++) {
      cellar.event({ name: "tick", session_id: `kill-${n % 10}`, attributes: { n } });
      if (n === 60) await apps.kill("ingest");
      if (n === 120) void apps.start("ingest");
      await Bun.sleep(5);
    }
    const result = await cellar.shutdown({ timeoutMs: 90_000 });
    console.log(`ingest killed mid-run: flush() -> ${JSON.stringify(result)}`);
    expect(result).toMatchObject({ sent: total, dropped: 0, refused: 0, pending: 0 });
    const counts = await waitFor(
      async () => {
        const c = await eventCounts("kill-");
        return c.size === total ? c : null;
      },
      { what: "every event stored", timeoutMs: 60_000 },
    );
    for (let n = 0; n < total; n++) expect(counts.get(n)).toBe(1);
  });

  test("429 with Retry-After is honoured (timings printed); the rate limit counts items", async () => {
    const port = await freePort();
    await apps.start(
      "ingest",
      { INGEST_PORT: String(port), INGEST_RATE_LIMIT_PER_SECOND: "2", INGEST_RATE_LIMIT_BURST: "5" },
      "ingest-limited",
    );
    const seen: Array<{ at: number; status: number; retryAfter: string | null }> = [];
    const cellar = new Cellar({
      dsn,
      endpoint: `http://127.0.0.1:${port}`,
      maxBatchItems: 5,
      serverless: true,
      fetch: (async (url: string, init: RequestInit) => {
        const res = await fetch(url, init);
        seen.push({ at: Date.now(), status: res.status, retryAfter: res.headers.get("retry-after") });
        return res;
      }) as typeof fetch,
    });
    for (let n = 0; n < 15; n++) cellar.event({ name: "limited", session_id: "limited-1", attributes: { n } });
    const result = await cellar.flush({ timeoutMs: 60_000 });
    const t0 = seen[0].at;
    console.log(
      `429/Retry-After timings: ${seen.map((s) => `+${s.at - t0}ms ${s.status}${s.retryAfter ? ` (Retry-After ${s.retryAfter}s)` : ""}`).join(", ")}`,
    );
    expect(result).toMatchObject({ sent: 15, dropped: 0 });
    expect(seen.some((s) => s.status === 429)).toBe(true);
    seen.forEach((s, i) => {
      if (s.status === 429) expect(seen[i + 1].at - s.at).toBeGreaterThanOrEqual(Number(s.retryAfter) * 1000 - 50);
    });
    await apps.kill("ingest-limited");
    const counts = await waitFor(async () => ((await eventCounts("limited-")).size === 15 ? true : null));
    expect(counts).toBe(true);
  });

  test("a full queue: drops counted and reported, the rest stored", async () => {
    const errors: CellarError[] = [];
    const cellar = new Cellar({ dsn, serverless: true, maxQueueItems: 5, onError: (e) => errors.push(e) });
    for (let n = 0; n < 12; n++) cellar.event({ name: "full", session_id: "full-1", attributes: { n } });
    expect(await cellar.flush()).toMatchObject({ sent: 5, dropped: 7 });
    expect(errors.map((e) => e.kind)).toEqual(["dropped"]);
    const counts = await waitFor(async () => {
      const c = await eventCounts("full-");
      return c.size === 5 ? c : null;
    });
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
  });

  test("a process that exits right after its last call has its data stored (Bun; Node and Deno on the built package)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cellar-sdk-exit-"));
    try {
      const build = spawnSync(process.execPath, ["run", join(SDK, "scripts/build.ts")], { encoding: "utf8" });
      expect(build.status).toBe(0);
      const script = (from: string, runtime: string) => `
        import { Cellar } from ${JSON.stringify(from)};
        const dsn = typeof Deno !== "undefined" ? Deno.env.get("CELLAR_DSN") : process.env.CELLAR_DSN;
        const cellar = new Cellar({ dsn });
        for (let n = 0; n < 3; n++) cellar.event({ name: "last", session_id: "exit-${runtime}", attributes: { n } });
        console.log("done, no flush");
      `;
      for (const [runtime, argv, from] of [
        ["bun", [process.execPath, "run"], join(SDK, "src/index.ts")],
        ["node", ["node"], join(SDK, "dist/index.js")],
        ["deno", [findDeno(), "run", "-A"], join(SDK, "dist/index.js")],
      ] as const) {
        const file = join(dir, `${runtime}.mjs`);
        writeFileSync(file, script(from, runtime));
        const r = spawnSync(argv[0], [...argv.slice(1), file], {
          env: { ...process.env, CELLAR_DSN: dsn },
          encoding: "utf8",
          timeout: 60_000,
        });
        expect({ runtime, status: r.status, stdout: r.stdout.trim(), stderr: r.stderr }).toMatchObject({
          status: 0,
          stdout: "done, no flush",
        });
        await waitFor(async () => ((await eventCounts(`exit-${runtime}`)).size === 3 ? true : null), {
          what: `the ${runtime} process's events`,
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
