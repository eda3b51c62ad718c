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
import { type Answered, answered } from "./helpers/openapi-answers";
import { createTestStack, type TestStack } from "./helpers/stack";

type App = ReturnType<typeof createPlatformApp>;
interface Operation {
  method: string;
  path: string;
  names: string[];
  spec: { parameters?: any[]; requestBody?: any; responses: Record<string, any> };
}
interface Answer extends Answered {
  operation: string;
  why: string;
}

let stack: TestStack;
let a: Awaited<ReturnType<typeof bootstrapTenant>>;
let viewer: string;
let doc: { paths: Record<string, Record<string, Operation["spec"]>> };
let operations: Operation[];
const answers: Answer[] = [];
const SERVICE = "support-bot";

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  a = await bootstrapTenant(stack.database.db, { name: "acme", plan: "pro", webhooks: true });
  await createService(stack.database.db, { tenantId: a.tenantId, name: SERVICE });
  // A viewer outside every project: below every role check, and no service is its project's.
  const u = await createUser(stack.database.db, { tenantId: a.tenantId, email: "viewer@acme.test", role: "viewer" });
  viewer = (await createApiKey(stack.database.db, { kind: "platform", userId: u.id })).key;
  doc = await (await stack.platformRequest("/openapi.json")).json();
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, spec]) => ({
      method: method.toUpperCase(),
      path,
      names: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
      spec,
    })),
  );
}, 60_000);
afterAll(() => stack?.stop());

const platform = (deps: Partial<Parameters<typeof createPlatformApp>[0]>): App =>
  createPlatformApp({
    db: stack.database.db,
    sql: stack.database.sql,
    keys: new KeyResolver(stack.database.db, { ttlMs: 200 }),
    logger: createLogger("silent"),
    windowSeconds: 1,
    ...deps,
  });

/** A value for a path parameter that names nothing in the tenant (a well-formed one). */
function unknownValue(name: string): string {
  if (name === "seq") return "987654";
  if (/^(serviceName|name)$/.test(name)) return `no-such-${name.toLowerCase()}`;
  return crypto.randomUUID();
}

const fill = (op: Operation, value: (name: string) => string) =>
  op.path.replace(/\{([^}]+)\}/g, (_, n) => encodeURIComponent(value(n)));

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

/** Statuses this file drives on every route that can answer them (so a listed one must be seen). */
const DRIVEN_ON_EVERY_ROUTE = ["401", "413", "429", "503"];

/** A value of the wrong JSON type for a schema (a string where a number is wanted, and so on). */
function wrongType(schema: any): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  if (type === "string") return 12345;
  if (schema?.anyOf || schema?.oneOf || schema?.enum || schema?.const !== undefined) return { not: "one of these" };
  return "not-this-type";
}

/** The operation's required query parameters, each naming the test's service (all but `except`). */
const requiredQueryOf = (op: Operation, except = "") =>
  (op.spec.parameters ?? [])
    .filter((p) => p.in === "query" && p.required && p.name !== except)
    .map((p) => `${p.name}=${SERVICE}`)
    .join("&");

/** Requests each operation's own schemas refuse, each with the field(s) its 400 must name. */
function refusedInputs(
  op: Operation,
): Array<{ why: string; query?: string; path?: string; body?: string; names: string[] }> {
  const out: Array<{ why: string; query?: string; path?: string; body?: string; names: string[] }> = [];
  const params = op.spec.parameters ?? [];
  const query = params.filter((p) => p.in === "query");
  const requiredQuery = query.filter((p) => p.required);
  const validQuery = (except: string) => requiredQueryOf(op, except);
  for (const p of requiredQuery)
    out.push({ why: `query ${p.name} missing`, query: validQuery(p.name), names: [p.name] });
  for (const p of query) {
    const type = p.schema?.type;
    const bad =
      type === "integer" || type === "number"
        ? "not-a-number"
        : p.schema?.enum || p.schema?.anyOf
          ? "no-such-value"
          : p.schema?.format === "date-time"
            ? "yesterday"
            : undefined;
    if (bad === undefined) continue;
    const rest = validQuery(p.name);
    out.push({ why: `query ${p.name} refused`, query: `${rest ? `${rest}&` : ""}${p.name}=${bad}`, names: [p.name] });
  }
  for (const p of params.filter(
    (x) => x.in === "path" && (x.schema?.type === "integer" || x.schema?.format === "uuid"),
  ))
    out.push({
      why: `path ${p.name} refused`,
      path: fill(op, (n) => (n === p.name ? "not-valid" : unknownValue(n))),
      query: validQuery(""),
      names: [p.name],
    });
  const body = op.spec.requestBody?.content?.["application/json"]?.schema;
  if (body?.properties) {
    const required: string[] = body.required ?? [];
    if (required.length)
      out.push({ why: "body without its required fields", body: "{}", query: validQuery(""), names: required });
    const names = Object.keys(body.properties);
    out.push({
      why: "body fields of the wrong type",
      body: JSON.stringify(Object.fromEntries(names.map((n) => [n, wrongType(body.properties[n])]))),
      query: validQuery(""),
      names,
    });
  }
  return out;
}

test("every route's answer to every generated failure is in the OpenAPI document", async () => {
  const ok = stack.platform;
  const unnamed: string[] = [];
  for (const op of operations) {
    expect((await call(ok, op, "no token")).status).toBe(401);
    await call(ok, op, "unknown ids", {
      token: a.platformKey,
      query: requiredQueryOf(op).replaceAll(SERVICE, "no-such-service"),
    });
    await call(ok, op, "viewer outside the projects", {
      token: viewer,
      query: requiredQueryOf(op),
      path: fill(op, (n) => (n === "serviceName" ? SERVICE : unknownValue(n))),
    });
    if (hasBody(op)) {
      expect((await call(ok, op, "body not JSON", { token: a.platformKey, body: "{not json" })).status).toBe(400);
      const big = await call(ok, op, "body too large", {
        token: a.platformKey,
        body: JSON.stringify({ pad: "x".repeat(PLATFORM_MAX_BODY_BYTES) }),
      });
      expect(big.status).toBe(413);
    }
    for (const refused of refusedInputs(op)) {
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
  const table = new Map<string, Map<string, Set<string>>>();
  for (const x of answers) {
    const m = table.get(x.operation) ?? new Map<string, Set<string>>();
    table.set(x.operation, m);
    const s = m.get(String(x.status)) ?? new Set<string>();
    m.set(String(x.status), s);
    s.add(x.why);
  }
  // The other way round: what every route answers by construction, listed only where answered.
  const unseen: string[] = [];
  for (const [operation, seen] of table) {
    const [method, path] = operation.split(" ");
    for (const status of Object.keys(doc.paths[path][method].responses))
      if (DRIVEN_ON_EVERY_ROUTE.includes(status) && !seen.has(status)) unseen.push(`${operation} lists ${status}`);
  }
  expect(unseen).toEqual([]);
  expect(table.size).toBe(operations.length);
}, 180_000);

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
    if (answer.status >= 400 && (typeof answer.body?.error !== "string" || Object.keys(answer.body).length !== 1))
      out.push(`${answer.operation} ${answer.status}: not an {"error": ...} body: ${JSON.stringify(answer.body)}`);
    if (answer.status >= 400 && documented.content?.["application/json"]?.schema?.$ref !== "#/components/schemas/Error")
      out.push(`${answer.operation} ${answer.status}: documented without the Error schema`);
    if (answer.retryAfter !== null && !documented.headers?.["Retry-After"])
      out.push(`${answer.operation} ${answer.status}: Retry-After answered, not documented`);
  }
  return out;
}
