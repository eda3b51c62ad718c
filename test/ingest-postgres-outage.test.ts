import { afterAll, beforeAll, expect, test } from "bun:test";
import type { KeyResolver, ResolvedKey } from "@cellar/shared/auth/keys";
import { KeyResolver as RealResolver } from "@cellar/shared/auth/keys";
import { createIngestFixture, type IngestFixture } from "../apps/ingest/test/fixture";
import { chatTrace } from "./helpers/payloads";

// Issue 12: ingest needs only JetStream to store data. While Postgres does not answer (a
// restart, SIGSTOP), keys this instance saw valid keep working; unknown keys get a 503 with
// Retry-After within a few seconds, never a hang. The switch below stands in for Postgres.
let fx: IngestFixture;
let postgresAnswers = true;
let app: ReturnType<IngestFixture["build"]>;

beforeAll(async () => {
  fx = await createIngestFixture();
  const real = new RealResolver(fx.stack.database.db, { ttlMs: 0 });
  const switched = {
    resolve: (presented: string): Promise<ResolvedKey | null> =>
      postgresAnswers ? real.resolve(presented) : new Promise(() => {}),
  } as unknown as KeyResolver;
  app = fx.build({ keys: switched });
}, 60_000);
afterAll(() => fx?.stop());

const trace = () =>
  chatTrace({ sessionId: `s-${crypto.randomUUID()}`, messages: [{ role: "user", content: "hi" }], reply: "hello" });

test("while Postgres hangs, a key seen valid is still accepted (and stored) within a fraction of a second; an unknown one gets 503 + Retry-After within 3.5 s", async () => {
  expect((await fx.post("/raw/traces", trace(), {}, app)).status).toBe(200);
  const stranger = await fx.key("telemetry"); // valid in Postgres, never seen by this instance
  postgresAnswers = false;
  try {
    const before = await fx.stored();
    let t0 = Date.now();
    const known = await fx.post("/raw/traces", trace(), {}, app);
    expect(known.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(await fx.stored()).toBe(before + 1);

    t0 = Date.now();
    const unknown = await fx.post("/raw/traces", trace(), { authorization: `Bearer ${stranger.key}` }, app);
    expect(unknown.status).toBe(503);
    expect(unknown.headers.get("retry-after")).toBe("2");
    expect(await unknown.json()).toEqual({ error: expect.stringContaining("unavailable") });
    expect(Date.now() - t0).toBeLessThan(3_500);
  } finally {
    postgresAnswers = true;
  }
});

test("a key found revoked is forgotten at once: it is refused even if Postgres hangs right after", async () => {
  const k = await fx.key("telemetry");
  expect((await fx.post("/raw/traces", trace(), { authorization: `Bearer ${k.key}` }, app)).status).toBe(200);
  await fx.stack.database.sql`update api_keys set revoked_at = now() where id = ${k.id}`;
  expect((await fx.post("/raw/traces", trace(), { authorization: `Bearer ${k.key}` }, app)).status).toBe(401);
  postgresAnswers = false;
  try {
    expect((await fx.post("/raw/traces", trace(), { authorization: `Bearer ${k.key}` }, app)).status).toBe(503);
  } finally {
    postgresAnswers = true;
  }
});
