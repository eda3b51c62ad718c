// The ingestion host's answers against its OpenAPI document (GET /openapi.json). The requests are
// generated from the document: every operation is driven with every failure a caller or the
// server can cause — no key, a key that is not one, a client DSN used without its origin, a
// Content-Type or Content-Encoding it does not take, a body that is not JSON or too large, the
// per-credential limit, storage (NATS) and the key store (Postgres) unavailable, and body fields
// the operation's own schema refuses — plus one accepted request. Every answer must be a response
// the document lists for that operation, with the documented error body (`{"error": ...}` on the
// JSON doors, a google.rpc.Status carrying `error` on OTLP/JSON) and Retry-After documented where
// the answer carries it; a refused field must be named; every status the document lists must be
// answered by some generated request.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createDatabase } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { createIngestApp, type IngestDeps } from "../apps/ingest/src/app";
import { type Answered, answered, bodyProblem } from "./helpers/openapi-answers";
import { otlpChat } from "./helpers/otlp-chat";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, type TestStack } from "./helpers/stack";

type App = ReturnType<typeof createIngestApp>;
interface Operation {
  path: string;
  spec: { requestBody?: any; responses: Record<string, any> };
}
interface Answer extends Answered {
  operation: string;
  why: string;
}

const SERVICE = "support-bot";
const MAX_BODY = 8 * 1024;
let stack: TestStack;
let key: string;
let lockedDsn: string;
let doc: { paths: Record<string, { post: Operation["spec"] }>; components: unknown };
let operations: Operation[];
const answers: Answer[] = [];

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  const a = await bootstrapTenant(stack.database.db, { name: "acme" });
  await createService(stack.database.db, { tenantId: a.tenantId, name: SERVICE });
  key = a.telemetryKey;
  lockedDsn = (
    await createApiKey(stack.database.db, {
      kind: "dsn-client",
      tenantId: a.tenantId,
      serviceName: SERVICE,
      origins: ["https://app.acme.test"],
    })
  ).key;
  doc = await (await stack.ingest.handle(new Request("http://ingest.test/openapi.json"))).json();
  operations = Object.entries(doc.paths).map(([path, ops]) => ({ path, spec: ops.post }));
}, 60_000);
afterAll(() => stack?.stop());

const ingest = (deps: Partial<IngestDeps>): App =>
  createIngestApp({
    js: stack.nats.js,
    topology: stack.nats.topology,
    keys: new KeyResolver(stack.database.db, { ttlMs: 200 }),
    logger: createLogger("silent"),
    maxBodyBytes: MAX_BODY,
    ...deps,
  });

/** One body each operation accepts (the OTLP doors' bodies are the OpenTelemetry protocol's). */
function accepted(path: string): unknown {
  const n = crypto.randomUUID().slice(0, 8);
  const trace = chatTrace({ sessionId: `s-${n}`, messages: [{ role: "user", content: "q" }], reply: "a" });
  const now = Date.now();
  switch (path) {
    case "/raw/traces":
      return trace;
    case "/raw/events":
      return { name: "clicked", service_name: SERVICE, session_id: `s-${n}`, timestamp: new Date(now).toISOString() };
    case "/raw/scores":
      return { service_name: SERVICE, session_id: `s-${n}`, name: "helpful", value: 1 };
    case "/raw/batch":
      return { items: [{ type: "trace", body: trace }] };
    case "/v1/traces":
      return otlpChat({
        service: SERVICE,
        traceId: crypto.randomUUID().replace(/-/g, ""),
        spanId: crypto.randomUUID().replace(/-/g, "").slice(0, 16),
        provider: "openai",
        model: "gpt-4o",
        session: `s-${n}`,
        startMs: now,
        attributes: {},
      });
    case "/v1/logs":
      return {
        resourceLogs: [
          {
            resource: { attributes: [{ key: "service.name", value: { stringValue: SERVICE } }] },
            scopeLogs: [
              {
                logRecords: [
                  {
                    timeUnixNano: `${now}000000`,
                    eventName: "clicked",
                    body: { stringValue: "clicked" },
                    attributes: [{ key: "session.id", value: { stringValue: `s-${n}` } }],
                  },
                ],
              },
            ],
          },
        ],
      };
  }
  throw new Error(`no accepted body for ${path}: add one`);
}

async function call(
  app: App,
  op: Operation,
  why: string,
  o: { key?: string | null; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers = new Headers({ "content-type": "application/json", ...o.headers });
  if (o.key !== null) headers.set("authorization", `Bearer ${o.key ?? key}`);
  const res = await app.handle(
    new Request(`http://ingest.test${op.path}`, {
      method: "POST",
      headers,
      body: o.body ?? JSON.stringify(accepted(op.path)),
    }),
  );
  const answer = { operation: op.path, why, ...(await answered(res)) };
  answers.push(answer);
  return answer;
}

/** A value of the wrong JSON type for a schema. */
function wrongType(schema: any): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  return type === "string" ? 12345 : "not-this-type";
}

test("every ingestion door's answer to every generated failure is in the OpenAPI document", async () => {
  const ok = stack.ingest;
  const small = ingest({});
  const unnamed: string[] = [];
  for (const op of operations) {
    const done = await call(ok, op, "accepted");
    expect([op.path, done.status, done.body]).toEqual([op.path, 200, expect.anything()]);
    await call(ok, op, "no key", { key: null });
    await call(ok, op, "not a key", { key: "svc-ing-nothing" });
    await call(ok, op, "client DSN without its origin", { key: lockedDsn });
    await call(ok, op, "content-type not taken", { headers: { "content-type": "text/plain" } });
    await call(ok, op, "content-encoding not taken", { headers: { "content-encoding": "br" } });
    await call(ok, op, "body not JSON", { body: "{not json" });
    await call(small, op, "body too large", { body: JSON.stringify({ pad: "x".repeat(MAX_BODY) }) });
    if (op.spec.requestBody?.content?.["application/x-protobuf"]) {
      const protobuf = { "content-type": "application/x-protobuf" };
      await call(ok, op, "no key (protobuf)", { key: null, headers: protobuf, body: "" });
      await call(small, op, "body too large (protobuf)", { headers: protobuf, body: "x".repeat(MAX_BODY + 1) });
    }
    // The schema's own refusals, each naming the field.
    const schema = op.spec.requestBody?.content?.["application/json"]?.schema;
    if (schema?.properties) {
      const names = Object.keys(schema.properties);
      const refusals: Array<[string, unknown, string[]]> = [
        ["body without its required fields", {}, schema.required ?? []],
        [
          "body fields of the wrong type",
          Object.fromEntries(names.map((n) => [n, wrongType(schema.properties[n])])),
          names,
        ],
      ];
      for (const [why, body, named] of refusals) {
        if (!named.length) continue;
        const r = await call(ok, op, why, { body: JSON.stringify(body) });
        if (r.status !== 400 || !named.some((n) => String(r.body?.error).includes(n)))
          unnamed.push(`${op.path} ${why}: ${r.status} ${JSON.stringify(r.body)} (names none of ${named.join(", ")})`);
      }
    }
    // The per-credential limit: one request, then 429.
    const limited = ingest({ rateLimit: { perSecond: 0.001, burst: 1 } });
    await call(limited, op, "spend the one request");
    await call(limited, op, "rate limit");
    // Storage unavailable (NATS down, as watchConnection reports it).
    await call(ingest({ connected: () => false }), op, "storage down");
  }
  // The key store unavailable (Postgres down, no last-known key): authentication answers 503.
  const down = createDatabase("postgres://cellar:cellar@127.0.0.1:1/cellar", { max: 2, connectTimeoutSeconds: 2 });
  for (const op of operations) await call(ingest({ keys: new KeyResolver(down.db) }), op, "key store down");
  await down.close().catch(() => {});

  expect(unnamed).toEqual([]);
  const problems: string[] = [];
  const seen = new Map<string, Set<string>>();
  for (const x of answers) {
    seen.set(x.operation, (seen.get(x.operation) ?? new Set()).add(String(x.status)));
    const documented = doc.paths[x.operation].post.responses[String(x.status)];
    if (!documented) {
      problems.push(`${x.operation} answered ${x.status} (${x.why}), which the document does not list`);
      continue;
    }
    const media = documented.content?.[(x.contentType ?? "").split(";")[0].trim()];
    if (!media) problems.push(`${x.operation} ${x.status} (${x.why}): content-type ${x.contentType} not documented`);
    if (x.status >= 400 && x.contentType?.startsWith("application/x-protobuf")) {
      // A google.rpc.Status in protobuf: its message is the error; the media type is what is checked.
    } else if (x.status >= 400) {
      const schema = media?.schema;
      const shaped = schema?.$ref === "#/components/schemas/Error" || schema?.required?.includes("error");
      if (!shaped) problems.push(`${x.operation} ${x.status}: documented without an error field`);
      if (typeof x.body?.error !== "string")
        problems.push(`${x.operation} ${x.status} (${x.why}): no "error" in ${JSON.stringify(x.body)}`);
      if (schema?.$ref && Object.keys(x.body ?? {}).length !== 1)
        problems.push(`${x.operation} ${x.status} (${x.why}): more than {"error": ...}: ${JSON.stringify(x.body)}`);
    }
    const mismatch =
      media?.schema &&
      x.contentType?.startsWith("application/json") &&
      bodyProblem(media.schema, x.body, doc.components);
    if (mismatch) problems.push(`${x.operation} ${x.status} (${x.why}): body not as documented: ${mismatch}`);
    if (x.retryAfter !== null && !documented.headers?.["Retry-After"])
      problems.push(`${x.operation} ${x.status} (${x.why}): Retry-After answered, not documented`);
    if (["429", "503"].includes(String(x.status)) && !(Number(x.retryAfter) > 0))
      problems.push(`${x.operation} ${x.status} (${x.why}): no Retry-After`);
  }
  expect(problems).toEqual([]);
  // The other way round: every status listed (but the catch-all 500) was answered.
  const unseen = operations.flatMap((op) =>
    Object.keys(op.spec.responses)
      .filter((s) => s !== "500" && !seen.get(op.path)?.has(s))
      .map((s) => `${op.path} lists ${s}, never answered`),
  );
  expect(unseen).toEqual([]);
}, 120_000);
