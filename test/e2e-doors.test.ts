/**
 * Every door, as deployed (issue 21): docker-compose.yml's services as local processes
 * (helpers/compose-stack.ts: the real nats-server with the deployed NATS users, Postgres, the
 * migrate step, and `bun run apps/<app>/src/main.ts` for each of the four apps). Real clients
 * send through every door; each case ends with the transcript, tokens and cost read back through
 * the platform API over HTTP. One stack for the whole file, a 1-second maturation window.
 * The batch door (`/raw/batch`, docs/sdks.md, issue 23) is driven like the single doors, and
 * OTLP/gRPC (issue 41) with the SDK's own gRPC exporters like OTLP/HTTP.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import fc from "fast-check";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { bytesMethod, LOGS_EXPORT, TRACE_EXPORT } from "../apps/ingest/src/otlp/grpc/server.ts";
import { createDatabase } from "@cellar/shared/db/client";
import {
  APP_PORTS,
  GRPC_PORT,
  metricSample,
  publishAsNatsAdmin,
  startComposeStack,
  type ComposeStack,
} from "./helpers/compose-stack";
import {
  exportCallWithMessageLogs,
  exportSpans,
  modelCallSpan,
  PROVIDERS,
  type Convention,
  type ModelCall,
  type Provider,
} from "./helpers/genai-spans";
import { instrumentedCall, INSTRUMENTED_MODELS } from "./helpers/instrumented-calls";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";
import { platformClient } from "./helpers/platform-client";

type Tenant = Awaited<ReturnType<typeof bootstrapTenant>>;
let stack: ComposeStack;
let tenant: Tenant;
let ingestUrl: string;
/** The ingest container's OTLP/gRPC listener (INGEST_GRPC_PORT 4317 in docker-compose.yml). */
let grpcUrl: string;
const SERVICE = "doors";

beforeAll(async () => {
  stack = await startComposeStack();
  ingestUrl = stack.url(APP_PORTS.ingest, "");
  grpcUrl = `http://127.0.0.1:${stack.local.port(GRPC_PORT)}`;
  tenant = await newTenant("doors");
}, 180_000);
afterAll(() => stack?.stop());

async function newTenant(name: string): Promise<Tenant> {
  const owner = createDatabase(stack.pg.databaseUrl("cellar"), { max: 1 });
  try {
    return await bootstrapTenant(owner.db, { name, email: `owner@${name}.test` });
  } finally {
    await owner.close();
  }
}

const platform = (t: Tenant, path: string, init: RequestInit = {}) =>
  platformClient(stack.url(APP_PORTS.platform, "/api/v1"), t.platformKey).request(path, init);
const raw = (t: Tenant, door: "traces" | "events" | "batch", body: unknown) =>
  fetch(`${ingestUrl}/raw/${door}`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.telemetryKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** The complete transcript and the session's metrics, read through the platform. */
async function readBack(t: Tenant, sessionId: string, timeoutMs = 60_000) {
  const path = `${encodeURIComponent(SERVICE)}/${encodeURIComponent(sessionId)}`;
  const transcript = await waitFor(
    async () => {
      const r = await platform(t, `/telemetry/otel/sessions/${path}/transcript`);
      const body = r.status === 200 ? await r.json() : null;
      return body?.status === "complete" ? body : null;
    },
    { what: `a complete transcript of ${sessionId}`, timeoutMs, intervalMs: 250 },
  );
  const metrics = (await (await platform(t, `/telemetry/metrics/session/${path}`)).json()).metrics;
  return { items: transcript.items as any[], metrics };
}

const call = (sessionId: string, i = 0): ModelCall => ({
  sessionId,
  system: `You answer questions about parcels (${sessionId}).`,
  user: `Where is parcel ${1000 + i}?`,
  answer: `Parcel ${1000 + i} is out for delivery.`,
  inputTokens: 30 + i,
  outputTokens: 7 + i,
});

/** The call as a `/raw/traces` payload (OpenAI's shape). */
const rawTraceOf = (c: ModelCall) =>
  chatTrace({
    sessionId: c.sessionId,
    serviceName: SERVICE,
    messages: [
      { role: "system", content: c.system },
      { role: "user", content: c.user },
    ],
    reply: c.answer,
    usage: { prompt_tokens: c.inputTokens, completion_tokens: c.outputTokens },
  });

/** The three messages, the call's tokens and its cost at the provider's public price. */
async function expectCall(
  t: Tenant,
  c: ModelCall,
  provider: Provider,
  price: { input: number; output: number } = PROVIDERS[provider],
) {
  const { items, metrics } = await readBack(t, c.sessionId);
  expect(items.filter((i) => i.type !== "event").map((i) => [i.type, i.content])).toEqual([
    ["system", c.system],
    ["user", c.user],
    ["assistant", c.answer],
  ]);
  expect(metrics).toMatchObject({ modelCalls: 1, promptTokens: c.inputTokens, completionTokens: c.outputTokens });
  expect(metrics.costUsd).toBeCloseTo((c.inputTokens * price.input + c.outputTokens * price.output) / 1_000_000, 12);
}

const processorSample = async (name: string, labels: Record<string, string>) =>
  metricSample(await (await fetch(stack.url(APP_PORTS.processor, "/metrics"))).text(), name, labels);
const deadLetterCount = async (t: Tenant) => (await (await platform(t, "/dead-letters")).json()).count as number;

test("the issue's scenario: an Anthropic span in the current conventions from the JSON exporter lands", async () => {
  const c = call("issue-21-anthropic");
  await exportSpans({
    url: `${ingestUrl}/v1/traces`,
    credential: tenant.telemetryKey,
    encoding: "json",
    serviceName: SERVICE,
    spans: [modelCallSpan("genai", "anthropic", c)],
  });
  await expectCall(tenant, c, "anthropic");
}, 90_000);

test("every door, every provider, both encodings and every convention: stored and readable", async () => {
  const table: string[][] = [];
  const checks: Array<() => Promise<void>> = [];
  const row = (door: string, client: string, provider: string, check: () => Promise<void>) =>
    checks.push(async () => {
      await check();
      table.push([door, client, provider, "stored and readable"]);
    });

  // /raw/traces and /raw/events: the contract's JSON doors, with fetch.
  const rawCall = call("raw-openai");
  expect((await raw(tenant, "traces", rawTraceOf(rawCall))).status).toBe(200);
  const event = {
    name: "parcel.lookup",
    service_name: SERVICE,
    session_id: rawCall.sessionId,
    timestamp: new Date().toISOString(),
    attributes: { parcel: 1000 },
  };
  expect((await raw(tenant, "events", event)).status).toBe(200);
  row("/raw/traces", "fetch (JSON)", "openai", () => expectCall(tenant, rawCall, "openai"));
  row("/raw/events", "fetch (JSON)", "—", async () => {
    const { items } = await readBack(tenant, rawCall.sessionId);
    expect(items.filter((i) => i.type === "event").map((i) => [i.name, i.content.attributes])).toEqual([
      ["parcel.lookup", { parcel: 1000 }],
    ]);
  });

  // /v1/traces: the SDK's protobuf and JSON exporters, one request per encoding and convention;
  // TraceService/Export: the SDK's gRPC exporter, the same spans.
  const conventions: Array<[Convention, string]> = [
    ["genai", "GenAI conventions (gen_ai.provider.name, input/output messages, system instructions)"],
    ["openllmetry", "OpenLLMetry (gen_ai.prompt.N / gen_ai.completion.N)"],
    ["openinference", "OpenInference (llm.*)"],
  ];
  const doorOf = (encoding: string) => (encoding === "grpc" ? "gRPC TraceService/Export" : "/v1/traces");
  for (const encoding of ["protobuf", "json", "grpc"] as const)
    for (const [convention, label] of conventions) {
      const calls = (Object.keys(PROVIDERS) as Provider[]).map((provider, i) => ({
        provider,
        call: call(`otlp-${encoding}-${convention}-${provider}`, i),
      }));
      await exportSpans({
        url: encoding === "grpc" ? grpcUrl : `${ingestUrl}/v1/traces`,
        credential: tenant.telemetryKey,
        encoding,
        serviceName: SERVICE,
        spans: calls.map((c) => modelCallSpan(convention, c.provider, c.call)),
      });
      for (const c of calls)
        row(doorOf(encoding), `OTel SDK ${encoding} exporter, ${label}`, c.provider, () =>
          expectCall(tenant, c.call, c.provider),
        );
    }

  // /v1/logs: messages as log records beside a span without them, every log exporter.
  for (const encoding of ["protobuf", "json", "grpc"] as const) {
    const c = call(`logs-${encoding}`);
    const traceId = await exportCallWithMessageLogs({
      baseUrl: encoding === "grpc" ? grpcUrl : ingestUrl,
      credential: tenant.telemetryKey,
      encoding,
      serviceName: SERVICE,
      call: c,
    });
    row(
      encoding === "grpc" ? "gRPC LogsService + TraceService" : `/v1/logs + /v1/traces`,
      `OTel SDK ${encoding} log and span exporters, per-message events`,
      "openai",
      () => expectCall(tenant, { ...c, sessionId: traceId }, "openai"),
    );
  }

  // Real instrumentations over the providers' own clients (their APIs faked by msw).
  for (const [via, provider, encoding, label] of [
    ["traceloop-anthropic", "anthropic", "protobuf", "@traceloop/instrumentation-anthropic + @anthropic-ai/sdk"],
    ["openinference-openai", "openai", "json", "@arizeai/openinference-instrumentation-openai + openai"],
  ] as const) {
    const c = call(`instrumented-${via}`, 5);
    await instrumentedCall({
      via,
      baseUrl: ingestUrl,
      credential: tenant.telemetryKey,
      encoding,
      serviceName: SERVICE,
      call: c,
    });
    row("/v1/traces", `${label}, OTel SDK ${encoding} exporter`, provider, () =>
      expectCall(tenant, c, provider, INSTRUMENTED_MODELS[via]),
    );
  }

  // /raw/batch: a trace and an event in one request (docs/sdks.md).
  const batchCall = call("batch-openai", 3);
  const batched = await raw(tenant, "batch", {
    items: [
      { type: "trace", body: rawTraceOf(batchCall) },
      { type: "event", body: { ...event, session_id: batchCall.sessionId, name: "parcel.batched" } },
    ],
  });
  expect(await batched.json()).toEqual({ status: "success", items: [{ status: "accepted" }, { status: "accepted" }] });
  row("/raw/batch", "fetch (JSON), a trace and an event", "openai", async () => {
    await expectCall(tenant, batchCall, "openai");
    const { items } = await readBack(tenant, batchCall.sessionId);
    expect(items.filter((i) => i.type === "event").map((i) => i.name)).toEqual(["parcel.batched"]);
  });

  for (const check of checks) await check();
  console.log(
    [
      "| door | client | provider | result |",
      "| --- | --- | --- | --- |",
      ...table.map((r) => `| ${r.join(" | ")} |`),
    ].join("\n"),
  );
  expect(table).toHaveLength(2 + 3 * 3 * 4 + 3 + 2 + 1);
  expect(await deadLetterCount(tenant)).toBe(0);
}, 150_000);

/** One raw unary call to the gRPC door, with grpc-js's client: bytes no SDK would send. */
function grpcExportRaw(path: string, message: Buffer, token: string): Promise<grpc.ServiceError | null> {
  const Client = grpc.makeGenericClientConstructor(
    { Export: bytesMethod(path) } as unknown as grpc.ServiceDefinition,
    "Raw",
  );
  const client = new Client(
    grpcUrl.replace("http://", ""),
    grpc.credentials.createInsecure(),
  ) as unknown as grpc.Client & {
    Export: Function;
  };
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve) =>
    client.Export(message, metadata, (err: grpc.ServiceError | null) => {
      client.close();
      resolve(err);
    }),
  );
}

test("the gRPC door refuses as the HTTP door does: a bad token UNAUTHENTICATED (nothing stored), an oversized message RESOURCE_EXHAUSTED, garbage INVALID_ARGUMENT, and it keeps serving", async () => {
  const t = await newTenant("grpc-refusals");
  const refused = async (credential: string, c: ModelCall, attributes: Record<string, string> = {}) => {
    const span = modelCallSpan("genai", "openai", c);
    const error = await exportSpans({
      url: grpcUrl,
      credential,
      encoding: "grpc",
      serviceName: SERVICE,
      spans: [{ ...span, attributes: { ...span.attributes, ...attributes } }],
    }).then(
      () => null,
      (err: grpc.ServiceError) => err,
    );
    return error?.code;
  };
  const wrongKey = `${t.telemetryKey.slice(0, -4)}zzzz`;
  expect(await refused(wrongKey, call("grpc-bad-token"))).toBe(grpc.status.UNAUTHENTICATED);
  // Over INGEST_MAX_BODY_BYTES (4 MiB in .env.example): refused before it is read whole.
  expect(await refused(t.telemetryKey, call("grpc-oversized"), { padding: "x".repeat(4_300_000) })).toBe(
    grpc.status.RESOURCE_EXHAUSTED,
  );
  const garbage = Buffer.from("\xff\xff\xff\xff\x0f not an ExportTraceServiceRequest", "latin1");
  expect((await grpcExportRaw(TRACE_EXPORT, garbage, t.telemetryKey))?.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect((await grpcExportRaw(LOGS_EXPORT, garbage, t.telemetryKey))?.code).toBe(grpc.status.INVALID_ARGUMENT);

  // The same listener still serves: the next export lands and reads back. Another credential:
  // this one's unreadable messages made its next request wait for a full bucket (docs/ingestion.md).
  const other = await newTenant("grpc-after");
  const after = call("grpc-after-refusals", 2);
  expect(
    await exportSpans({
      url: grpcUrl,
      credential: other.telemetryKey,
      encoding: "grpc",
      serviceName: SERVICE,
      spans: [modelCallSpan("openllmetry", "anthropic", after)],
    }),
  ).toEqual({ rejected: 0 });
  await expectCall(other, after, "anthropic");
  // Stored in order, so once the later call is readable the refused ones would be too: they are not.
  for (const session of ["grpc-bad-token", "grpc-oversized"]) {
    const r = await platform(t, `/telemetry/otel/sessions/${SERVICE}/${session}/transcript`);
    expect({ session, status: r.status }).toEqual({ session, status: 404 });
  }
  expect(await deadLetterCount(t)).toBe(0);
}, 90_000);

// ---- Across the process boundary, for generated inputs: stored means readable, nothing lost. ----

type Door = "raw-traces" | "raw-events" | "raw-batch" | "otlp-json" | "otlp-protobuf" | "otlp-grpc";
const DOORS: Door[] = ["raw-traces", "raw-events", "raw-batch", "otlp-json", "otlp-protobuf", "otlp-grpc"];
/** Any text: every code point (lone surrogates included) or whole graphemes. */
const anyText = fc.oneof(
  fc.string({ unit: "binary", minLength: 1, maxLength: 120 }),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 120 }),
);
const generated = fc.record({
  session: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 24 }),
  user: anyText,
  answer: anyText,
  provider: fc.constantFrom(...(Object.keys(PROVIDERS) as Provider[])),
  tokens: fc.integer({ min: 0, max: 2_000_000 }),
});
type Generated = typeof generated extends fc.Arbitrary<infer T> ? T : never;

const asCall = (g: Generated, sessionId: string): ModelCall => ({
  sessionId,
  system: "Be brief.",
  user: g.user,
  answer: g.answer,
  inputTokens: g.tokens,
  outputTokens: 1,
});

const generatedTrace = (g: Generated, sessionId: string) =>
  chatTrace({
    sessionId,
    serviceName: SERVICE,
    messages: [{ role: "user", content: g.user }],
    reply: g.answer,
    usage: { prompt_tokens: g.tokens, completion_tokens: 1 },
  });

/** Sends one generated input through `door`: null when ingest answered it as stored, else why not. */
async function send(t: Tenant, door: Door, g: Generated, sessionId: string): Promise<string | null> {
  const verdict = async (r: Response) => (r.status === 200 ? null : `${r.status} ${(await r.json()).error}`);
  if (door === "raw-traces") return verdict(await raw(t, "traces", generatedTrace(g, sessionId)));
  if (door === "raw-events") {
    const event = { name: g.user, service_name: SERVICE, session_id: sessionId, timestamp: new Date().toISOString() };
    return verdict(await raw(t, "events", { ...event, attributes: { answer: g.answer } }));
  }
  if (door === "raw-batch") {
    const r = await raw(t, "batch", { items: [{ type: "trace", body: generatedTrace(g, sessionId) }] });
    const item = r.status === 200 ? (await r.json()).items[0] : null;
    return item?.status === "accepted" ? null : (item?.error ?? `${r.status}`);
  }
  const encoding = door === "otlp-json" ? "json" : door === "otlp-grpc" ? "grpc" : "protobuf";
  const { rejected } = await exportSpans({
    url: encoding === "grpc" ? grpcUrl : `${ingestUrl}/v1/traces`,
    credential: t.telemetryKey,
    encoding,
    serviceName: SERVICE,
    spans: [modelCallSpan("genai", g.provider, asCall(g, sessionId))],
  });
  return rejected === 0 ? null : "partial success: span rejected";
}

async function expectReadable(t: Tenant, door: Door, g: Generated, sessionId: string): Promise<void> {
  const { items, metrics } = await readBack(t, sessionId);
  if (door === "raw-events") {
    expect(items.map((i) => [i.type, i.name, i.content.attributes])).toEqual([["event", g.user, { answer: g.answer }]]);
    return;
  }
  const expected = door.startsWith("raw-") ? [] : [["system", "Be brief."]];
  expect(items.map((i) => [i.type, i.content])).toEqual([...expected, ["user", g.user], ["assistant", g.answer]]);
  expect(metrics).toMatchObject({ modelCalls: 1, promptTokens: g.tokens, completionTokens: 1 });
}

test("property: on every door, what ingest answered as stored is readable later, and nothing is dead-lettered", async () => {
  const seed = Number(process.env.FC_SEED ?? Date.now() % 2_147_483_647);
  const t = await newTenant("property");
  const counts = Object.fromEntries(DOORS.map((d) => [d, { sent: 0, stored: 0, refused: 0, readable: 0 }]));
  const perDoor = fc.record(
    Object.fromEntries(DOORS.map((d) => [d, fc.array(generated, { minLength: 2, maxLength: 4 })])) as Record<
      Door,
      fc.Arbitrary<Generated[]>
    >,
  );
  let run = 0;
  const refusals: string[] = [];
  try {
    await fc.assert(
      fc.asyncProperty(perDoor, async (inputs) => {
        run++;
        const stored: Array<[Door, Generated, string]> = [];
        for (const door of DOORS)
          for (const [i, g] of inputs[door].entries()) {
            const sessionId = `p${run}-${door}-${i}-${g.session}`;
            counts[door].sent++;
            const refusal = await send(t, door, g, sessionId);
            if (refusal === null) {
              counts[door].stored++;
              stored.push([door, g, sessionId]);
            } else {
              counts[door].refused++;
              refusals.push(`${door}: ${refusal.slice(0, 120)}`);
            }
          }
        for (const [door, g, sessionId] of stored) {
          await expectReadable(t, door, g, sessionId);
          counts[door].readable++;
        }
      }),
      // Each run waits for maturation; a failure is reported as found, not shrunk.
      { seed, numRuns: 6, endOnFailure: true },
    );
  } finally {
    console.log(`e2e-doors property: ${JSON.stringify({ seed, runs: run, counts, refusals })}`);
  }
  expect(await deadLetterCount(t)).toBe(0);
  expect(await processorSample("cellar_ingest_dead_letters_total", { tenant: t.tenantId })).toBe(0);
}, 150_000);

test("an INGEST dead letter is loud: logged at error, counted per tenant, shown and replayed on the platform", async () => {
  const t = await newTenant("loud");
  // Only a bug or a foreign publisher can put such a message on INGEST (ingest validates everything).
  const broken = { kind: "trace", tenantId: t.tenantId, serviceName: SERVICE, payload: { session_id: "loud-1" } };
  await publishAsNatsAdmin(stack, "ingest.trace", JSON.stringify(broken));
  const counted = (n: number) => async () =>
    (await processorSample("cellar_ingest_dead_letters_total", { tenant: t.tenantId })) === n;
  await waitFor(counted(1), { what: "the dead letter counted for the tenant", timeoutMs: 30_000 });
  const logged = stack.running
    .get("processor")!
    .output()
    .split("\n")
    .filter((l) => l.includes("message dead-lettered") && l.includes(t.tenantId))
    .map((l) => JSON.parse(l));
  expect(logged).toMatchObject([{ level: "error", tenant: t.tenantId, stream: "INGEST" }]);
  expect(await deadLetterCount(t)).toBe(1);
  expect(await deadLetterCount(tenant)).toBe(0);

  // The platform replays it under its own NATS user; still broken, it comes back as a new one.
  const replay = await platform(t, "/dead-letters/replay", { method: "POST" });
  expect(replay.status).toBe(200);
  expect(await replay.json()).toMatchObject({ replayed: 1, more: false });
  await waitFor(counted(2), { what: "the replayed message dead-lettered again", timeoutMs: 30_000 });
  expect(await deadLetterCount(t)).toBe(1);
}, 90_000);
