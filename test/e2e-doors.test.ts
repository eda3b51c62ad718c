/**
 * Every door, as deployed (issue 21): docker-compose.yml's services as local processes
 * (helpers/compose-stack.ts: the real nats-server with the deployed NATS users, Postgres, the
 * migrate step, and `bun run apps/<app>/src/main.ts` for each of the four apps). Real clients
 * send through every door; each case ends with the transcript, tokens and cost read back through
 * the platform API over HTTP. One stack for the whole file, a 1-second maturation window.
 *
 * The batch door (`/raw/batch`, docs/sdks.md) is being built on another branch: its cases go in
 * the marked place below once it exists.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase } from "@cellar/shared/db/client";
import { APP_PORTS, startComposeStack, type ComposeStack } from "./helpers/compose-stack";
import {
  exportCallWithMessageLogs,
  exportSpans,
  expectedCost,
  modelCallSpan,
  PROVIDERS,
  type Convention,
  type ModelCall,
  type Provider,
} from "./helpers/genai-spans";
import { chatTrace } from "./helpers/payloads";
import { waitFor } from "./helpers/stack";

type Tenant = Awaited<ReturnType<typeof bootstrapTenant>>;
let stack: ComposeStack;
let tenant: Tenant;
let ingestUrl: string;
const SERVICE = "doors";

beforeAll(async () => {
  stack = await startComposeStack();
  ingestUrl = stack.url(APP_PORTS.ingest, "");
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
  fetch(stack.url(APP_PORTS.platform, `/api/v1${path}`), {
    ...init,
    headers: { authorization: `Token ${t.platformKey}`, "content-type": "application/json", ...init.headers },
  });
const raw = (t: Tenant, door: "traces" | "events", body: unknown) =>
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

/** The three messages, the call's tokens and its cost at the provider's public price. */
async function expectCall(t: Tenant, c: ModelCall, provider: Provider) {
  const { items, metrics } = await readBack(t, c.sessionId);
  expect(items.filter((i) => i.type !== "event").map((i) => [i.type, i.content])).toEqual([
    ["system", c.system],
    ["user", c.user],
    ["assistant", c.answer],
  ]);
  expect(metrics).toMatchObject({ modelCalls: 1, promptTokens: c.inputTokens, completionTokens: c.outputTokens });
  expect(metrics.costUsd).toBeCloseTo(expectedCost(provider, c), 12);
}

/** One sample's value from the processor's Prometheus text (0 when absent). */
async function processorSample(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(stack.url(APP_PORTS.processor, "/metrics"))).text();
  let total = 0;
  for (const line of text.split("\n"))
    if (line.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  return total;
}
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
  const rawTrace = chatTrace({
    sessionId: rawCall.sessionId,
    serviceName: SERVICE,
    messages: [
      { role: "system", content: rawCall.system },
      { role: "user", content: rawCall.user },
    ],
    reply: rawCall.answer,
    usage: { prompt_tokens: rawCall.inputTokens, completion_tokens: rawCall.outputTokens },
  });
  expect((await raw(tenant, "traces", rawTrace)).status).toBe(200);
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

  // /v1/traces: the SDK's protobuf and JSON exporters, one request per encoding and convention.
  const conventions: Array<[Convention, string]> = [
    ["genai", "GenAI conventions (gen_ai.provider.name, input/output messages, system instructions)"],
    ["openllmetry", "OpenLLMetry (gen_ai.prompt.N / gen_ai.completion.N)"],
    ["openinference", "OpenInference (llm.*)"],
  ];
  for (const encoding of ["protobuf", "json"] as const)
    for (const [convention, label] of conventions) {
      const calls = (Object.keys(PROVIDERS) as Provider[]).map((provider, i) => ({
        provider,
        call: call(`otlp-${encoding}-${convention}-${provider}`, i),
      }));
      await exportSpans({
        url: `${ingestUrl}/v1/traces`,
        credential: tenant.telemetryKey,
        encoding,
        serviceName: SERVICE,
        spans: calls.map((c) => modelCallSpan(convention, c.provider, c.call)),
      });
      for (const c of calls)
        row(`/v1/traces`, `OTel SDK ${encoding} exporter, ${label}`, c.provider, () =>
          expectCall(tenant, c.call, c.provider),
        );
    }

  // /v1/logs: messages as log records beside a span without them, both log exporters.
  for (const encoding of ["protobuf", "json"] as const) {
    const c = call(`logs-${encoding}`);
    const traceId = await exportCallWithMessageLogs({
      baseUrl: ingestUrl,
      credential: tenant.telemetryKey,
      encoding,
      serviceName: SERVICE,
      call: c,
    });
    row(`/v1/logs + /v1/traces`, `OTel SDK ${encoding} log and span exporters, per-message events`, "openai", () =>
      expectCall(tenant, { ...c, sessionId: traceId }, "openai"),
    );
  }

  // ---- /raw/batch: cases go here once the batch door lands (issue 23). ----

  for (const check of checks) await check();
  console.log(
    [
      "| door | client | provider | result |",
      "| --- | --- | --- | --- |",
      ...table.map((r) => `| ${r.join(" | ")} |`),
    ].join("\n"),
  );
  expect(table).toHaveLength(2 + 2 * 3 * 4 + 2);
  expect(await deadLetterCount(tenant)).toBe(0);
}, 120_000);

test.todo("/raw/batch: the batch door's cases (issue 23), stored and readable");
