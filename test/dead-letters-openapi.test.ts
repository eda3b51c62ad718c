// The dead-letters routes' answers against the platform's OpenAPI document (docs/dead-letters.md,
// "In the dashboard"): every status each route answers, driven for real (no token, a role below
// admin, a bad seq, a body that is not JSON or too large, another tenant's dead letter, the per-key
// limit, no NATS connection, a dead letter the ledger has not counted yet), must be a response the
// document lists for that operation, with an `{"error": ...}` body, and Retry-After documented
// where the answer carries it; a 200 must match the documented body.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { bootstrapTenant, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { deadLetterLedgerConsumer } from "@cellar/shared/nats/catalogue";
import type { createPlatformApp } from "../apps/platform/src/app";
import { DeadLetterList, ReplayResult } from "../apps/platform/src/dead-letters/model";
import { PLATFORM_MAX_BODY_BYTES } from "../apps/platform/src/http/body";
import { createPlatformLimiter } from "../apps/platform/src/http/limits";
import { deadLetterIngest } from "./helpers/dead-letters";
import { type Answered, answered } from "./helpers/openapi-answers";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, platformOnStack, type TestStack } from "./helpers/stack";

let stack: TestStack;
let a: Awaited<ReturnType<typeof bootstrapTenant>>;
let b: Awaited<ReturnType<typeof bootstrapTenant>>;
let member: string;
let doc: { paths: Record<string, Record<string, { responses: Record<string, any> }>> };

type App = ReturnType<typeof createPlatformApp>;
/** A platform on the stack's database and NATS beside the stack's own: one per condition. */
// Dead letters without the ledger's count before a replay: the 503 of a dead letter not counted yet is answered.
const platform = (deps: Partial<Parameters<typeof createPlatformApp>[0]>): App =>
  platformOnStack(stack, { deadLetters: { js: stack.nats.js, topology: stack.nats.topology }, ...deps });

interface Answer extends Answered {
  operation: string;
}
const answers: Answer[] = [];

/** One call to a route, recorded with the operation it is documented under. */
async function call(
  app: App,
  method: "GET" | "POST",
  path: string,
  documented: string,
  o: { token?: string; body?: string; contentType?: string } = {},
): Promise<Answer> {
  const headers = new Headers();
  if (o.token) headers.set("authorization", `Token ${o.token}`);
  if (o.body !== undefined) headers.set("content-type", o.contentType ?? "application/json");
  const res = await app.handle(new Request(`http://platform.test/api/v1${path}`, { method, headers, body: o.body }));
  const answer = { operation: `${method.toLowerCase()} ${documented}`, ...(await answered(res)) };
  answers.push(answer);
  return answer;
}

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  a = await bootstrapTenant(stack.database.db, { name: "acme" });
  b = await bootstrapTenant(stack.database.db, { name: "globex", email: "owner@globex.test" });
  const u = await createUser(stack.database.db, { tenantId: a.tenantId, email: "member@acme.test", role: "member" });
  member = (await createApiKey(stack.database.db, { kind: "platform", userId: u.id })).key;
  // Three of A's calls answered as stored, then set aside (no processor runs in this file).
  for (const session of ["a-1", "a-2", "a-3"])
    expect(
      (
        await stack.ingestRequest(
          "/raw/traces",
          chatTrace({ sessionId: session, messages: [{ role: "user", content: "q" }], reply: "a" }),
          { authorization: `Bearer ${a.telemetryKey}` },
        )
      ).status,
    ).toBe(200);
  await deadLetterIngest(stack.nats, 3);
  doc = await (await stack.platformRequest("/openapi.json")).json();
}, 60_000);
afterAll(() => stack?.stop());

test("every status the dead-letters routes answer is in the OpenAPI document, Retry-After where the answer has it", async () => {
  const ok = stack.platform;
  const list = await call(ok, "GET", "/dead-letters", "/dead-letters", { token: a.platformKey });
  expect(list.status).toBe(200);
  expect(Value.Check(DeadLetterList, list.body)).toBe(true);
  const [first, second, third] = list.body.data.map((d: { seq: number }) => d.seq);
  const one = (seq: number | string) => `/dead-letters/${seq}/replay`;

  // Who may call.
  for (const [method, path, documented] of [
    ["GET", "/dead-letters", "/dead-letters"],
    ["POST", "/dead-letters/replay", "/dead-letters/replay"],
    ["POST", one(first), "/dead-letters/{seq}/replay"],
  ] as const) {
    expect((await call(ok, method, path, documented)).status).toBe(401);
    expect((await call(ok, method, path, documented, { token: member })).status).toBe(403);
  }
  // What the caller sends.
  expect((await call(ok, "POST", one("x"), "/dead-letters/{seq}/replay", { token: a.platformKey })).status).toBe(400);
  expect((await call(ok, "POST", one(first), "/dead-letters/{seq}/replay", { token: b.platformKey })).status).toBe(404);
  for (const [path, documented] of [
    ["/dead-letters/replay", "/dead-letters/replay"],
    [one(first), "/dead-letters/{seq}/replay"],
  ] as const) {
    const bad = await call(ok, "POST", path, documented, { token: a.platformKey, body: "{not json" });
    expect(bad.status).toBe(400);
    const big = await call(ok, "POST", path, documented, {
      token: a.platformKey,
      body: JSON.stringify({ pad: "x".repeat(PLATFORM_MAX_BODY_BYTES) }),
    });
    expect(big.status).toBe(413);
  }

  // The per-key limit: one request a key, then 429 with Retry-After.
  const limited = platform({
    limiter: createPlatformLimiter({
      perKey: { perSecond: 0.001, burst: 1 },
      sendsPerTenant: { perSecond: 0.001, burst: 1 },
    }),
  });
  const outOfTurn = [
    ["GET", "/dead-letters", "/dead-letters"],
    ["POST", "/dead-letters/replay", "/dead-letters/replay"],
    ["POST", one(first), "/dead-letters/{seq}/replay"],
  ] as const;
  await call(limited, "GET", "/dead-letters", "/dead-letters", { token: b.platformKey });
  for (const [method, path, documented] of outOfTurn) {
    const r = await call(limited, method, path, documented, { token: b.platformKey });
    expect([r.status, r.retryAfter !== null]).toEqual([429, true]);
  }

  // No NATS connection: 503 with Retry-After on every route.
  const cut = platform({ deadLetters: undefined });
  for (const [method, path, documented] of outOfTurn) {
    const r = await call(cut, method, path, documented, { token: a.platformKey });
    expect([r.status, r.retryAfter !== null]).toEqual([503, true]);
  }

  // Not counted by the ledger yet: a processor took the dead letters from `processor-ledger` and
  // has not acknowledged them (stalled, or killed a moment ago). Kept, 503 with Retry-After.
  const counting = await stack.nats.js.consumers.get(
    stack.nats.topology.deadLetterStream,
    deadLetterLedgerConsumer.consumer!.durable,
  );
  const held = [];
  for await (const m of await counting.fetch({ max_messages: 10, expires: 2_000 })) {
    held.push(m);
    if (held.length === 3) break;
  }
  expect(held.length).toBe(3);
  const waiting = platform({ deadLetters: { js: stack.nats.js, topology: stack.nats.topology, countWaitMs: 300 } });
  for (const [path, documented] of [
    [one(first), "/dead-letters/{seq}/replay"],
    ["/dead-letters/replay", "/dead-letters/replay"],
  ] as const) {
    const r = await call(waiting, "POST", path, documented, { token: a.platformKey });
    expect([r.status, r.retryAfter]).toEqual([503, "5"]);
    expect(r.body.error).toContain("not counted");
  }
  // Counted: replayed (one alone, then the rest).
  // ackAck: the server confirmed each ack (a fixed pause could end before it on a loaded machine).
  for (const m of held) expect(await m.ackAck()).toBe(true);
  const alone = await call(waiting, "POST", one(first), "/dead-letters/{seq}/replay", { token: a.platformKey });
  expect(alone.status).toBe(200);
  expect(Value.Check(ReplayResult, alone.body)).toBe(true);
  const rest = await call(waiting, "POST", "/dead-letters/replay", "/dead-letters/replay", { token: a.platformKey });
  expect(rest.status).toBe(200);
  expect(Value.Check(ReplayResult, rest.body)).toBe(true);
  expect(rest.body.results.map((r: { seq: number }) => r.seq)).toEqual([second, third]);
  // Replayed already: a missing one.
  expect((await call(ok, "POST", one(first), "/dead-letters/{seq}/replay", { token: a.platformKey })).status).toBe(404);

  // Every answer against the document.
  const problems: string[] = [];
  for (const answer of answers) {
    const [method, path] = answer.operation.split(" ");
    const op = doc.paths[path]?.[method];
    if (!op) {
      problems.push(`${answer.operation}: not in the document`);
      continue;
    }
    const documented = op.responses[String(answer.status)];
    if (!documented) {
      problems.push(`${answer.operation} answered ${answer.status}, which the document does not list`);
      continue;
    }
    if (answer.status >= 400 && (typeof answer.body?.error !== "string" || Object.keys(answer.body).length !== 1))
      problems.push(`${answer.operation} ${answer.status}: not an {"error": ...} body: ${JSON.stringify(answer.body)}`);
    if (answer.retryAfter !== null && !documented.headers?.["Retry-After"])
      problems.push(`${answer.operation} ${answer.status}: Retry-After answered, not documented`);
  }
  expect(problems).toEqual([]);
  // Each operation's answers were all driven here: the document lists nothing this test did not see.
  for (const operation of new Set(answers.map((x) => x.operation))) {
    const [method, path] = operation.split(" ");
    const seen = new Set(answers.filter((x) => x.operation === operation).map((x) => String(x.status)));
    const listed = Object.keys(doc.paths[path][method].responses).filter((s) => s !== "500");
    expect({ operation, listed: listed.filter((s) => !seen.has(s)) }).toEqual({ operation, listed: [] });
  }
}, 60_000);
