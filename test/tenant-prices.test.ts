import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { runAdmin } from "./helpers/admin-cli";
import { otlpChat } from "./helpers/otlp-chat";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/** Per-tenant prices and custom models through the admin CLI (docs/otlp.md, "Prices"). */

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let other: Awaited<ReturnType<typeof bootstrapTenant>>;
let databaseUrl: string;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  tenant = await bootstrapTenant(stack.database.db, { name: "priced" });
  other = await bootstrapTenant(stack.database.db, { name: "public-prices" });
  // The CLI talks to this file's database: the harness server's URL with this database's name.
  const [{ name }] = await stack.database.sql<{ name: string }[]>`select current_database() as name`;
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  databaseUrl = url.toString();
});
afterAll(() => stack.stop());

const admin = (...args: string[]) => runAdmin(args, { databaseUrl });

function call(session: string, spanId: string, model: string, usage: Record<string, number>) {
  return otlpChat({
    service: "ft-bot",
    traceId: "12".repeat(16),
    spanId,
    provider: "openai",
    model,
    session,
    startMs: 1_760_000_000_000,
    attributes: usage,
  });
}

async function costOfSession(key: string, platformKey: string, session: string) {
  const res = await stack.ingest.handle(
    new Request("http://ingest.test/v1/traces", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(
        call(
          session,
          session === "s-custom" ? "0000000000000001" : "0000000000000002",
          session === "s-custom" ? "acme-ft-1" : "gpt-4o-mini",
          {
            "gen_ai.usage.input_tokens": 1_000_000,
            "gen_ai.usage.cache_read.input_tokens": 400_000,
            "gen_ai.usage.output_tokens": 100_000,
          },
        ),
      ),
    }),
  );
  expect(res.status).toBe(200);
  return waitFor(
    async () => {
      const r = await stack.platformRequest(`/telemetry/metrics/session/ft-bot/${session}`, { token: platformKey });
      if (r.status !== 200) return null;
      const body = await r.json();
      return body.status === "complete" ? body.metrics.costUsd : null;
    },
    { what: `metrics of ${session}`, timeoutMs: 30_000 },
  );
}

test("a custom model is priced by the tenant's entry, a known model's price can be overridden, other tenants keep the public table", async () => {
  expect(databaseUrl).toMatch(/^postgres:/);
  const set = admin(
    "price",
    "set",
    "--tenant",
    tenant.tenantId,
    "--model",
    "acme-ft-1",
    "--provider",
    "openai",
    "--input",
    "2",
    "--cached-input",
    "0.5",
    "--output",
    "8",
    "--context-window",
    "64000",
    "--source",
    "contract #12",
  );
  expect(set.code).toBe(0);
  expect(set.json).toMatchObject({
    model: "acme-ft-1",
    input: 2,
    cachedInput: 0.5,
    output: 8,
    contextWindow: 64000,
    fromDate: "1970-01-01",
    source: "contract #12",
  });
  expect(
    admin("price", "set", "--tenant", tenant.tenantId, "--model", "gpt-4o-mini", "--input", "0.1", "--output", "0.4")
      .code,
  ).toBe(0);
  const bad = admin("price", "set", "--tenant", tenant.tenantId, "--model", "x", "--input", "-1", "--output", "1");
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain("--input");
  expect(admin("price", "list", "--tenant", tenant.tenantId).json.prices.map((p: any) => p.model)).toEqual([
    "acme-ft-1",
    "gpt-4o-mini",
  ]);

  // 600k uncached + 400k cached input, 100k output.
  expect(await costOfSession(tenant.telemetryKey, tenant.platformKey, "s-custom")).toBeCloseTo(
    0.6 * 2 + 0.4 * 0.5 + 0.1 * 8,
    9,
  );
  expect(await costOfSession(tenant.telemetryKey, tenant.platformKey, "s-override")).toBeCloseTo(
    0.6 * 0.1 + 0.4 * 0.1 + 0.1 * 0.4,
    9,
  );
  // The public table for everyone else: gpt-4o-mini 0.15 / 0.075 / 0.60.
  expect(await costOfSession(other.telemetryKey, other.platformKey, "s-override")).toBeCloseTo(
    0.6 * 0.15 + 0.4 * 0.075 + 0.1 * 0.6,
    9,
  );

  // The custom model's context window (64,000) feeds the context-window detector: 1M prompt tokens.
  const detectors = async (tenantId: string, session: string) =>
    (
      await stack.database.sql<
        { detector: string }[]
      >`select detector from findings where tenant_id = ${tenantId} and session_id = ${session}`
    ).map((r) => r.detector);
  expect(await detectors(tenant.tenantId, "s-custom")).toContain("context_window_near");
  expect(admin("price", "delete", "--tenant", tenant.tenantId, "--model", "acme-ft-1").code).toBe(0);
  expect(admin("price", "delete", "--tenant", tenant.tenantId, "--model", "acme-ft-1").code).not.toBe(0);
});
