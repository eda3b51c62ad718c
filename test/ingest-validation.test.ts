import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createIngestFixture, type IngestFixture } from "../apps/ingest/test/fixture";
import { chatTrace } from "./helpers/payloads";

let fx: IngestFixture;
beforeAll(async () => {
  fx = await createIngestFixture({ maxBodyBytes: 64 * 1024 });
});
afterAll(() => fx.stop());

const base = () =>
  chatTrace({
    sessionId: "s-1",
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Hi" },
    ],
    reply: "Hello.",
    start: new Date("2025-03-01T10:00:00.000Z"),
  }) as any;

/** A copy of the valid trace with `edit` applied. */
const trace = (edit: (t: any) => void) => {
  const t = base();
  edit(t);
  return t;
};

const nested = (depth: number): unknown => (depth === 0 ? "leaf" : { n: nested(depth - 1) });
const validText = JSON.stringify(base());

type Case = [name: string, body: unknown, status: number, field: string, headers?: Record<string, string | undefined>];

const traceCases: Case[] = [
  ["provider other than openai", trace((t) => (t.provider = "anthropic")), 400, "provider"],
  ["provider missing", trace((t) => delete t.provider), 400, "provider"],
  ["provider null", trace((t) => (t.provider = null)), 400, "provider"],
  ["0 responses", trace((t) => (t.responses = [])), 400, "responses"],
  ["3 responses", trace((t) => (t.responses = [t.responses[0], t.responses[0], t.responses[0]])), 400, "responses"],
  ["responses is an object", trace((t) => (t.responses = t.responses[0])), 400, "responses"],
  ["start_time not a date", trace((t) => (t.start_time = "yesterday")), 400, "start_time"],
  ["start_time impossible day", trace((t) => (t.start_time = "2025-02-30T10:00:00Z")), 400, "start_time"],
  ["start_time without time zone", trace((t) => (t.start_time = "2025-03-01T10:00:00")), 400, "start_time"],
  ["start_time a number", trace((t) => (t.start_time = 1740823200000)), 400, "start_time"],
  ["end_time before start_time", trace((t) => (t.end_time = "2025-03-01T09:59:59.999Z")), 400, "end_time"],
  ["end_time missing", trace((t) => delete t.end_time), 400, "end_time"],
  ["session_id empty", trace((t) => (t.session_id = "")), 400, "session_id"],
  ["session_id blank", trace((t) => (t.session_id = "   ")), 400, "session_id"],
  ["session_id too long", trace((t) => (t.session_id = "s".repeat(513))), 400, "session_id"],
  ["session_id huge", trace((t) => (t.session_id = "s".repeat(50_000))), 400, "session_id"],
  ["session_id a number", trace((t) => (t.session_id = 42)), 400, "session_id"],
  ["session_id null", trace((t) => (t.session_id = null)), 400, "session_id"],
  ["session_id with a newline", trace((t) => (t.session_id = "a\nb")), 400, "session_id"],
  ["service_name too long", trace((t) => (t.service_name = "x".repeat(201))), 400, "service_name"],
  ["service_name missing with a telemetry key", trace((t) => delete t.service_name), 400, "service_name"],
  ["environment empty", trace((t) => (t.environment = "")), 400, "environment"],
  ["environment too long", trace((t) => (t.environment = "e".repeat(129))), 400, "environment"],
  ["request missing", trace((t) => delete t.request), 400, "request"],
  ["request.model missing", trace((t) => delete t.request.model), 400, "request.model"],
  ["request.messages empty", trace((t) => (t.request.messages = [])), 400, "request.messages"],
  ["message role missing", trace((t) => delete t.request.messages[1].role), 400, "request.messages[1].role"],
  ["message content a number", trace((t) => (t.request.messages[1].content = 7)), 400, "request.messages[1].content"],
  ["user content null", trace((t) => (t.request.messages[1].content = null)), 400, "request.messages[1].content"],
  ["user content missing", trace((t) => delete t.request.messages[1].content), 400, "request.messages[1].content"],
  [
    "content part without type",
    trace((t) => (t.request.messages[1].content = [{ text: "hi" }])),
    400,
    "request.messages[1].content: must be a string, an array of content parts",
  ],
  ["response id missing", trace((t) => delete t.responses[0].id), 400, "responses[0].id"],
  ["response usage missing", trace((t) => delete t.responses[0].usage), 400, "responses[0].usage"],
  [
    "negative token count",
    trace((t) => (t.responses[0].usage.total_tokens = -1)),
    400,
    "responses[0].usage.total_tokens",
  ],
  [
    "token count as a string",
    trace((t) => (t.responses[0].usage.prompt_tokens = "120")),
    400,
    "responses[0].usage.prompt_tokens",
  ],
  [
    "token count absurdly large",
    trace((t) => (t.responses[0].usage.completion_tokens = 1e20)),
    400,
    "responses[0].usage.completion_tokens",
  ],
  [
    "token count fractional",
    trace((t) => (t.responses[0].usage.completion_tokens = 1.5)),
    400,
    "responses[0].usage.completion_tokens",
  ],
  [
    "finish_reason missing",
    trace((t) => delete t.responses[0].choices[0].finish_reason),
    400,
    "responses[0].choices[0].finish_reason",
  ],
  [
    "choice message missing",
    trace((t) => delete t.responses[0].choices[0].message),
    400,
    "responses[0].choices[0].message",
  ],
  [
    "NUL in message content",
    trace((t) => (t.request.messages[1].content = "a\u0000b")),
    400,
    "request.messages[1].content",
  ],
  ["NUL in an unknown field's key", trace((t) => (t.metadata = { "k\u0000": 1 })), 400, "metadata.k"],
  ["unpaired surrogate", validText.replace('"Hi"', '"\\ud800"'), 400, "request.messages[1].content"],
  [
    "duplicate top-level key",
    validText.replace('"session_id":"s-1"', '"session_id":"s-1","session_id":"s-2"'),
    400,
    "session_id",
  ],
  [
    "duplicate nested key",
    validText.replace('"prompt_tokens":120', '"prompt_tokens":120,"prompt_tokens":1'),
    400,
    "responses[0].usage.prompt_tokens",
  ],
  ["nesting deeper than 64", trace((t) => (t.metadata = nested(80))), 400, "metadata.n.n"],
  ["invalid JSON", validText.slice(0, -1), 400, "JSON"],
  ["a JSON array", `[${validText}]`, 400, "body"],
  ["JSON null", "null", 400, "body"],
  ["empty body", "", 400, "body"],
  ["body over the limit", trace((t) => (t.request.messages[1].content = "x".repeat(70 * 1024))), 413, "bytes"],
  ["text/plain", validText, 415, "content-type", { "content-type": "text/plain" }],
  ["no content-type", validText, 415, "content-type", { "content-type": undefined }],
  ["JSON in another charset", validText, 415, "content-type", { "content-type": "application/json; charset=latin1" }],
];

const event = (edit: (e: any) => void = () => {}) => {
  const e: any = {
    name: "checkout",
    service_name: "support-bot",
    session_id: "s-1",
    timestamp: "2025-03-01T10:00:00Z",
  };
  edit(e);
  return e;
};

const eventCases: Case[] = [
  ["name missing", event((e) => delete e.name), 400, "name"],
  ["name blank", event((e) => (e.name = " ")), 400, "name"],
  ["session_id missing", event((e) => delete e.session_id), 400, "session_id"],
  ["timestamp invalid", event((e) => (e.timestamp = "2025-13-01T00:00:00Z")), 400, "timestamp"],
  ["severity_number 0", event((e) => (e.severity_number = 0)), 400, "severity_number"],
  ["severity_number 25", event((e) => (e.severity_number = 25)), 400, "severity_number"],
  ["severity_number fractional", event((e) => (e.severity_number = 9.5)), 400, "severity_number"],
  ["severity_number a string", event((e) => (e.severity_number = "9")), 400, "severity_number"],
  ["attributes an array", event((e) => (e.attributes = ["a"])), 400, "attributes"],
  ["body an array", event((e) => (e.body = [1])), 400, "body"],
  ["body a string", event((e) => (e.body = "text")), 400, "body"],
  ["body null", event((e) => (e.body = null)), 400, "body"],
  ["environment empty", event((e) => (e.environment = "")), 400, "environment"],
  ["NUL in an attribute value", event((e) => (e.attributes = { user: "a\u0000" })), 400, "attributes.user"],
];

async function expectRejected(path: string, [_, body, status, field, headers]: Case) {
  const before = await fx.stored();
  const res = await fx.post(path, body, headers);
  const json = await res.json();
  if (process.env.SHOW_ERRORS) console.log(res.status, json.error);
  expect({ status: res.status, mentionsField: typeof json.error === "string" && json.error.includes(field) }).toEqual({
    status,
    mentionsField: true,
  });
  expect(Object.keys(json)).toEqual(["error"]);
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(await fx.stored()).toBe(before);
}

describe("POST /raw/traces rejects bad input, names the field, stores nothing", () => {
  test("the valid baseline is accepted (so every case below fails for its own reason)", async () => {
    const res = await fx.post("/raw/traces", base());
    expect(res.status).toBe(200);
  });
  for (const c of traceCases) test(c[0], () => expectRejected("/raw/traces", c));
});

describe("POST /raw/events rejects bad input, names the field, stores nothing", () => {
  test("the minimal event is accepted", async () => {
    const res = await fx.post("/raw/events", event());
    expect(res.status).toBe(200);
  });
  for (const c of eventCases) test(c[0], () => expectRejected("/raw/events", c));
});

test("a body that is not UTF-8 is 400 and stores nothing", async () => {
  const before = await fx.stored();
  const bytes = new TextEncoder().encode(validText.replace('"Hi"', '"H?"'));
  bytes[bytes.indexOf("?".charCodeAt(0))] = 0xff;
  const res = await fx.app.handle(
    new Request("http://ingest.test/raw/traces", {
      method: "POST",
      headers: { "content-type": "application/json", ...fx.auth },
      body: bytes,
    }),
  );
  expect(res.status).toBe(400);
  expect((await res.json()).error).toContain("UTF-8");
  expect(await fx.stored()).toBe(before);
});

test("a leading UTF-8 BOM is ignored", async () => {
  const res = await fx.post("/raw/traces", "\ufeff" + JSON.stringify(trace((t) => (t.session_id = "bom"))));
  expect(res.status).toBe(200);
  expect((await fx.last()).payload.session_id).toBe("bom");
});

test("a chunked body over the limit is cut off with 413", async () => {
  const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent++ < 10) c.enqueue(chunk);
      else c.close();
    },
  });
  const res = await fx.app.handle(
    new Request("http://ingest.test/raw/traces", {
      method: "POST",
      headers: { "content-type": "application/json", ...fx.auth },
      body,
      duplex: "half",
    } as RequestInit),
  );
  expect(res.status).toBe(413);
  expect(sent).toBeLessThan(10);
});

describe("accepted shapes", () => {
  test("unknown fields, tool calls, content parts, null assistant content and unicode are stored as sent", async () => {
    const t = base();
    t.request.tools = [
      {
        type: "function",
        function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
      },
    ];
    t.request.messages.push(
      {
        role: "user",
        content: [
          { type: "text", text: "Zoë 👋 مرحبا e\u0301" },
          { type: "image_url", image_url: { url: "https://example.com/a.png" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
      },
      {
        role: "assistant",
        tool_calls: [{ id: "call_2", type: "function", function: { name: "lookup", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "result" },
    );
    t.responses.push({ ...t.responses[0], id: "chatcmpl-2" });
    t.responses[0].usage.completion_tokens_details = { reasoning_tokens: 12 };
    t.responses[0].usage.prompt_tokens_details = { cached_tokens: 64 };
    t.responses[0].choices[0].message = {
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: [{ id: "call_3", type: "function", function: { name: "lookup", arguments: "{}" } }],
    };
    t.responses[0].choices[0].finish_reason = "tool_calls";
    t.session_id = "sessão/ünïcode 🚀";
    t.metadata = { nested: nested(40) };
    const res = await fx.post("/raw/traces", t);
    expect(res.status).toBe(200);
    const stored = await fx.last();
    expect(stored.payload).toEqual(t);
    expect(stored).toMatchObject({ kind: "trace", tenantId: fx.tenant.tenantId, serviceName: "support-bot" });
  });

  test("a message content of 50 KB within the body limit is accepted", async () => {
    const res = await fx.post(
      "/raw/traces",
      trace((t) => (t.request.messages[1].content = "y".repeat(50 * 1024))),
    );
    expect(res.status).toBe(200);
  });

  test("a full event with every optional field is stored", async () => {
    const e = event((e) =>
      Object.assign(e, {
        severity_number: 24,
        attributes: { plan: "pro", n: 3 },
        body: { cart: { items: 2 } },
        environment: "prod",
        trace_id: "t-1",
      }),
    );
    const res = await fx.post("/raw/events", e);
    expect(res.status).toBe(200);
    // Stored as sent, but for the timestamp: normalised to its UTC form (docs/ingestion.md).
    expect((await fx.last()).payload).toEqual({ ...e, timestamp: "2025-03-01T10:00:00.000Z" });
  });

  test("a duplicated POST is answered 200 twice and stored once", async () => {
    const t = trace((t) => (t.session_id = "dup"));
    const before = await fx.stored();
    expect((await fx.post("/raw/traces", t)).status).toBe(200);
    expect((await fx.post("/raw/traces", { ...t })).status).toBe(200);
    expect(await fx.stored()).toBe(before + 1);
    // The message id hashes the body's bytes (docs/ingestion.md): the same content with keys in
    // another order is another body, stored again.
    const reordered = Object.fromEntries(Object.entries(t).reverse());
    expect((await fx.post("/raw/traces", reordered)).status).toBe(200);
    expect(await fx.stored()).toBe(before + 2);
  });
});

describe("HTTP surface", () => {
  test("unknown paths are 404 JSON with a request id", async () => {
    const res = await fx.app.handle(new Request("http://ingest.test/raw/spans", { method: "POST" }));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not found" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  test("GET on an ingest path is 405 with Allow", async () => {
    const res = await fx.app.handle(new Request("http://ingest.test/raw/traces"));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, OPTIONS");
    expect((await res.json()).error).toContain("POST");
  });

  test("x-request-id is echoed on success and on errors", async () => {
    const ok = await fx.post("/raw/traces", base(), { "x-request-id": "req-abc.1" });
    expect(ok.headers.get("x-request-id")).toBe("req-abc.1");
    const bad = await fx.post("/raw/traces", "{", { "x-request-id": "req-abc.2" });
    expect(bad.headers.get("x-request-id")).toBe("req-abc.2");
  });
});
