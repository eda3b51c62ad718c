// Every platform API route's answers against the platform's OpenAPI document. The requests are
// generated from the document itself (every operation, every path parameter): each route is
// driven with each failure a caller or the server can cause — no token, the per-key limit, a
// database that is down, a body that is not JSON or too large, a path or query value or body
// field the route's own schema refuses, an id that is not in the tenant, a role and project
// membership that do not cover it — and every answer must be a response the document lists
// for that operation, with an `{"error": ...}` body (a 400 naming the field it refused), and
// Retry-After documented where the answer carries it. The other way round, every status the
// document lists must be answered by some generated request.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createService, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createDatabase } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { createPlatformApp } from "../apps/platform/src/app";
import { PLATFORM_MAX_BODY_BYTES } from "../apps/platform/src/http/body";
import { createPlatformLimiter } from "../apps/platform/src/http/limits";
import { stubDns } from "./helpers/dns";
import { type Answered, answered, bodyProblem } from "./helpers/openapi-answers";
import {
  bodySchemaOf,
  fill,
  type Operation,
  operationsOf,
  refusedInputs,
  requiredQueryOf,
  sampleBody,
  unknownValue,
} from "./helpers/openapi-requests";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, platformOnStack, type TestStack, waitFor } from "./helpers/stack";

type App = ReturnType<typeof createPlatformApp>;
interface Answer extends Answered {
  operation: string;
  why: string;
}

let stack: TestStack;
let a: Awaited<ReturnType<typeof bootstrapTenant>>;
let viewer: string;
let viewerId: string;
let member: string;
let free: Awaited<ReturnType<typeof bootstrapTenant>>;
let serviceId: string;
let doc: { paths: Record<string, Record<string, Operation["spec"]>>; components: unknown };
let operations: Operation[];
const answers: Answer[] = [];
const SERVICE = "support-bot";
const SESSION = "s-real";
/** Ids of the matured session's parts. */
let real: Record<string, string>;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  a = await bootstrapTenant(stack.database.db, { name: "acme", plan: "pro", webhooks: true });
  serviceId = (await createService(stack.database.db, { tenantId: a.tenantId, name: SERVICE })).id;
  // A viewer and a member outside every project: below the role checks, and no service is theirs.
  const u = await createUser(stack.database.db, { tenantId: a.tenantId, email: "viewer@acme.test", role: "viewer" });
  viewerId = u.id;
  viewer = (await createApiKey(stack.database.db, { kind: "platform", userId: u.id })).key;
  const m = await createUser(stack.database.db, { tenantId: a.tenantId, email: "member@acme.test", role: "member" });
  member = (await createApiKey(stack.database.db, { kind: "platform", userId: m.id })).key;
  // A tenant whose plan lacks what `pro` has (intents: 402).
  free = await bootstrapTenant(stack.database.db, { name: "frugal", plan: "free", email: "owner@frugal.test" });
  await createService(stack.database.db, { tenantId: free.tenantId, name: SERVICE });
  // One matured session, so the reads have something to answer 200 with.
  await stack.startProcessor();
  const trace = chatTrace({ sessionId: SESSION, messages: [{ role: "user", content: "q" }], reply: "a" });
  const stored = await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${a.telemetryKey}` });
  expect(stored.status).toBe(200);
  const spans = await waitFor(
    async () => {
      const r = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/${SESSION}/spans`, {
        token: a.platformKey,
      });
      return r.status === 200 && ((await r.json()) as { spans: Array<{ traceId: string; spanId: string }> }).spans[0];
    },
    { what: "the session's spans", timeoutMs: 60_000 },
  );
  const transcript = await waitFor(
    async () => {
      const r = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/${SESSION}/transcript`, {
        token: a.platformKey,
      });
      const page = r.status === 200 && ((await r.json()) as { status: string; items: Array<{ id: string }> });
      return page && page.status === "complete" && page.items[0];
    },
    { what: "the session's transcript", timeoutMs: 60_000 },
  );
  real = { sessionId: SESSION, traceId: spans.traceId, spanId: spans.spanId, itemId: transcript.id };
  doc = await (await stack.platformRequest("/openapi.json")).json();
  operations = operationsOf(doc);
}, 150_000);
afterAll(() => stack?.stop());

/** A platform on the stack's database; the per-key limit far above the thousand requests a key sends here. */
const platform = (deps: Partial<Parameters<typeof createPlatformApp>[0]>): App =>
  platformOnStack(stack, {
    limiter: createPlatformLimiter({
      perKey: { perSecond: 1_000, burst: 100_000 },
      sendsPerTenant: { perSecond: 1_000, burst: 100_000 },
    }),
    ...deps,
  });

const hasBody = (op: Operation) => op.method !== "GET";

async function call(
  app: App,
  op: Operation,
  why: string,
  o: { token?: string; path?: string; query?: string; body?: string } = {},
): Promise<Answer> {
  const headers = new Headers();
  if (o.token) headers.set("authorization", `Token ${o.token}`);
  if (o.body !== undefined) headers.set("content-type", "application/json");
  const url = `http://platform.test/api/v1${o.path ?? fill(op, unknownValue)}${o.query ? `?${o.query}` : ""}`;
  const res = await app.handle(new Request(url, { method: op.method, headers, body: o.body }));
  const answer = { operation: `${op.method.toLowerCase()} ${op.path}`, why, ...(await answered(res)) };
  answers.push(answer);
  return answer;
}

test("every route's answer to every generated failure is in the OpenAPI document", async () => {
  const ok = platform({});
  const unnamed: string[] = [];
  for (const op of operations) {
    expect((await call(ok, op, "no token")).status).toBe(401);
    await call(ok, op, "unknown ids", {
      token: a.platformKey,
      query: requiredQueryOf(op, "no-such-service"),
    });
    await call(ok, op, "viewer outside the projects", {
      token: viewer,
      query: requiredQueryOf(op, SERVICE),
      path: fill(op, (n) => (n === "serviceName" ? SERVICE : unknownValue(n))),
    });
    if (op.path.includes("{"))
      await call(ok, op, "over-long path values", {
        token: a.platformKey,
        path: fill(op, () => "p".repeat(2_000)),
        query: requiredQueryOf(op, SERVICE),
      });
    if (hasBody(op)) {
      const bad = await call(ok, op, "body not JSON", { token: a.platformKey, body: "{not json" });
      expect([bad.operation, bad.status, bad.body]).toEqual([bad.operation, 400, { error: "body is not valid JSON" }]);
      const big = await call(ok, op, "body too large", {
        token: a.platformKey,
        body: JSON.stringify({ pad: "x".repeat(PLATFORM_MAX_BODY_BYTES) }),
      });
      expect(big.status).toBe(413);
    }
    for (const refused of refusedInputs(op, SERVICE)) {
      const r = await call(ok, op, refused.why, { token: a.platformKey, ...refused });
      if (r.status !== 400 || !refused.names.some((n) => String(r.body?.error).includes(n)))
        unnamed.push(
          `${r.operation} ${refused.why}: ${r.status} ${JSON.stringify(r.body)} (names none of ${refused.names.join(", ")})`,
        );
    }
  }
  const limited = platform({
    limiter: createPlatformLimiter({
      perKey: { perSecond: 0.001, burst: 1 },
      sendsPerTenant: { perSecond: 0.001, burst: 1 },
    }),
  });
  await call(limited, operations[0], "spend the one request", { token: a.platformKey });
  for (const op of operations) await call(limited, op, "per-key limit", { token: a.platformKey });

  // Postgres down: the key lookup itself cannot run, so every route answers before its own work.
  const down = createDatabase("postgres://cellar:cellar@127.0.0.1:1/cellar", { max: 2, connectTimeoutSeconds: 2 });
  const cut = createPlatformApp({
    db: down.db,
    sql: down.sql,
    keys: new KeyResolver(down.db),
    logger: createLogger("silent"),
    windowSeconds: 1,
  });
  for (const op of operations) {
    const r = await call(cut, op, "database down", { token: a.platformKey });
    expect([r.operation, r.status, Number(r.retryAfter) > 0]).toEqual([r.operation, 503, true]);
  }
  await down.close().catch(() => {});

  expect(unnamed).toEqual([]);
  expect(problems(answers)).toEqual([]);
}, 180_000);

/**
 * Bodies the document's schemas alone cannot make: of the operations whose body it does not
 * describe (parsed by hand, for messages the schema validator cannot give), and of those whose
 * fields depend on one another or on what exists. One each operation accepts.
 */
let evaluatorId = "";
const BODIES: Record<string, () => unknown> = {
  "post /evaluators": () => ({ service_name: SERVICE, name: "short", check: { type: "length", max: 500 } }),
  // The evaluator is a check: its verdicts are true or false.
  "post /reviews/{serviceName}/{sessionId}": () => ({ evaluator_id: evaluatorId, value: true }),
  "post /evaluators/{id}/runs": () => ({ mode: "dry_run", session_ids: [SESSION] }),
  "post /webhooks": () => ({
    trace_service_id: serviceId,
    name: "hook",
    url: "https://hooks.example.com/in",
    event_types: ["session.matured"],
  }),
  "put /webhooks/{id}": () => ({ name: "renamed" }),
  "post /scores": () => ({ service_name: SERVICE, session_id: "s-1", name: "helpful", value: 1 }),
  "put /monitors/{id}": () => MONITOR,
};
const MONITOR = {
  service_name: SERVICE,
  name: "cost",
  metric: "loss",
  window_seconds: 3600,
  direction: "above",
  threshold: 1,
};

/** The same body naming a service that is not in the tenant. */
const elsewhere = (body: unknown) =>
  body === undefined ? undefined : JSON.parse(JSON.stringify(body).replaceAll(`"${SERVICE}"`, '"no-such-service"'));

/** Later operations undo what earlier ones need: reads first, then writes, deletions last. */
const order = (op: Operation) =>
  op.method === "GET" ? 0 : op.method === "DELETE" || /deprovision|disable/.test(op.path) ? 2 : 1;

test("every route's answers with real ids, valid bodies and each caller are in the OpenAPI document", async () => {
  const app = platform({
    webhooks: {
      secretBox: stack.secretBox,
      js: stack.nats.js,
      topology: stack.nats.topology,
      resolveDns: stubDns({ "hooks.example.com": ["93.184.216.34"] }, null),
    },
    deadLetters: { js: stack.nats.js, topology: stack.nats.topology },
  });
  const send = (op: Operation, why: string, token: string, ids: Record<string, string>, body?: unknown) =>
    call(app, op, why, {
      token,
      path: fill(op, (n) => ids[n] ?? unknownValue(n)),
      query: requiredQueryOf(op, ids.serviceName ?? SERVICE, "", true),
      body: op.method === "GET" ? undefined : JSON.stringify(body ?? {}),
    });
  const bodyOf = (op: Operation) =>
    BODIES[`${op.method.toLowerCase()} ${op.path}`]?.() ?? sampleBody(bodySchemaOf(op), SERVICE);
  const byPath = (path: string, method = "POST") => operations.find((o) => o.path === path && o.method === method)!;

  // Resources to name: a subscription (up to the per-service cap: then 409), a monitor, an evaluator.
  const hook = byPath("/webhooks");
  const hooks: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await send(hook, "create up to the cap", a.platformKey, {}, bodyOf(hook));
    if (r.status === 201) hooks.push(r.body.id);
  }
  expect(hooks.length).toBe(5);
  const monitor = await send(byPath("/monitors"), "create", a.platformKey, {}, MONITOR);
  const evaluator = await send(byPath("/evaluators"), "create", a.platformKey, {}, bodyOf(byPath("/evaluators")));
  expect([monitor.status, evaluator.status]).toEqual([201, 201]);
  evaluatorId = evaluator.body.id;
  const ids = (op: Operation): Record<string, string> => ({
    ...real,
    serviceName: SERVICE,
    name: "helpful",
    id: op.path.startsWith("/webhooks")
      ? hooks[0]
      : op.path.startsWith("/organization/members")
        ? viewerId
        : op.path.startsWith("/organization/keys")
          ? a.telemetryKeyId
          : op.path.startsWith("/monitors")
            ? monitor.body?.id
            : evaluator.body?.id,
  });
  const sorted = [...operations].sort((x, y) => order(x) - order(y));
  // Callers below the route's role, or outside the service's project; then another plan.
  // Bodies: the one each operation accepts, then each optional field alone, then every field.
  const bodies = (op: Operation): Array<[string, unknown]> => {
    const every = sampleBody(bodySchemaOf(op), SERVICE, "", true) as Record<string, unknown> | undefined;
    const fields = every && typeof every === "object" ? Object.entries(every) : [];
    return [
      ...(fields.length > 1 ? ([["every field", every]] as Array<[string, unknown]>) : []),
      ...fields.map(([k, v]): [string, unknown] => [`only ${k}`, { [k]: v }]),
      ["the body it accepts", bodyOf(op)],
    ];
  };
  // Callers below the route's role, or outside the service's project; then another plan.
  for (const op of sorted) {
    for (const [what, body] of bodies(op)) {
      await send(op, `viewer, real ids, ${what}`, viewer, ids(op), body);
      await send(op, `member, real ids, ${what}`, member, ids(op), body);
      await send(op, `free plan, ${what}`, free.platformKey, { serviceName: SERVICE }, body);
      // Only the service is named; every other id is one the tenant does not have.
      const other = { serviceName: "no-such-service" };
      await send(op, `a service and ids not in the tenant, ${what}`, a.platformKey, other, elsewhere(body));
    }
  }
  // A run's estimate only (200), a run (201) and the run read back.
  const runs = byPath("/evaluators/{id}/runs");
  const body = { mode: "dry_run", session_ids: [SESSION] };
  await send(runs, "estimate only", a.platformKey, ids(runs), { ...body, estimate_only: true });
  const run = await send(runs, "a run", a.platformKey, ids(runs), body);
  const runRead = byPath("/evaluators/{id}/runs/{runId}", "GET");
  await send(runRead, "the run", a.platformKey, { ...ids(runRead), runId: run.body?.run?.id });
  // The owner: each body in turn (a create the first time), then the accepted one again.
  for (const op of sorted) {
    for (const [what, body] of bodies(op)) await send(op, `owner, real ids, ${what}`, a.platformKey, ids(op), body);
    if (op.method === "POST") await send(op, "owner, again", a.platformKey, ids(op), bodyOf(op));
  }
  // A disabled subscription takes no test send and no re-send.
  await send(byPath("/webhooks/{id}/disable"), "disable", a.platformKey, { id: hooks[1] });
  await send(byPath("/webhooks/{id}/test"), "disabled", a.platformKey, { id: hooks[1] });
  await send(byPath("/webhooks/{id}/deliveries/{deliveryId}/retry"), "disabled", a.platformKey, { id: hooks[1] });
  expect(problems(answers)).toEqual([]);
}, 180_000);

/**
 * Listed statuses no request of this file reaches, each with why. The list must match exactly:
 * a status driven later, or one the document stops listing, fails the test until removed here.
 */
const NOT_DRIVEN: Record<string, string> = {
  "get /telemetry/otel/issues/{issueId}/breakdown 200": "no issue is detected in the one fixture session",
  "post /webhooks/{id}/deliveries/{deliveryId}/retry 202":
    "needs a finished delivery, which takes a dispatcher (test/webhook-*.test.ts)",
  "post /dead-letters/{seq}/replay 200":
    "needs a dead letter counted by the ledger (test/dead-letters-openapi.test.ts)",
  "patch /organization/members/{id} 409": "the last owner kept: reached only by two owners demoting each other at once",
  "post /organization/members/{id}/deprovision 409":
    "the last owner kept: reached only by two owners deprovisioning each other at once",
};

test("every status the document lists is answered by some generated request", () => {
  const table = new Map<string, Map<string, Set<string>>>();
  for (const x of answers) {
    const m = table.get(x.operation) ?? new Map<string, Set<string>>();
    table.set(x.operation, m);
    m.set(String(x.status), (m.get(String(x.status)) ?? new Set<string>()).add(x.why));
  }
  expect(table.size).toBe(operations.length);
  const unseen: string[] = [];
  for (const [operation, seen] of table) {
    const [method, path] = operation.split(" ");
    for (const status of Object.keys(doc.paths[path][method].responses))
      if (status !== "500" && !seen.has(status)) unseen.push(`${operation} ${status}`);
  }
  expect(unseen.sort()).toEqual(Object.keys(NOT_DRIVEN).sort());
});

/** Each answer against the document: listed for its operation, the error shape, Retry-After documented. */
function problems(list: Answer[]): string[] {
  const out: string[] = [];
  for (const answer of list) {
    const [method, path] = answer.operation.split(" ");
    const op = doc.paths[path]?.[method];
    const documented = op?.responses[String(answer.status)];
    if (!documented) {
      out.push(`${answer.operation} answered ${answer.status} (${answer.why}), which the document does not list`);
      continue;
    }
    // 500 is listed on every operation, but no request a caller can make may end there.
    if (answer.status >= 500 && answer.status !== 503)
      out.push(`${answer.operation} answered ${answer.status} (${answer.why}): ${JSON.stringify(answer.body)}`);
    if (answer.status >= 400 && (typeof answer.body?.error !== "string" || Object.keys(answer.body).length !== 1))
      out.push(`${answer.operation} ${answer.status}: not an {"error": ...} body: ${JSON.stringify(answer.body)}`);
    if (answer.status >= 400 && documented.content?.["application/json"]?.schema?.$ref !== "#/components/schemas/Error")
      out.push(`${answer.operation} ${answer.status}: documented without the Error schema`);
    const schema = documented.content?.["application/json"]?.schema;
    const mismatch = schema && bodyProblem(schema, answer.body, doc.components);
    if (mismatch) out.push(`${answer.operation} ${answer.status} (${answer.why}): body not as documented: ${mismatch}`);
    if (answer.retryAfter !== null && !documented.headers?.["Retry-After"])
      out.push(`${answer.operation} ${answer.status}: Retry-After answered, not documented`);
  }
  return out;
}
