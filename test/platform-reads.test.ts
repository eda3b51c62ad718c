import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestStack, type TestStack } from "./helpers/stack";
import { assertDocumented, call, seedPlatform, type PlatformFixture } from "./helpers/platform";

let stack: TestStack;
let f: PlatformFixture;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
});
afterAll(() => stack.stop());

const S = "/telemetry/otel/sessions/support-bot/conv-1";
/** A documented 200 read with the owner's key: status and schema are checked on every call. */
async function read(path: string, body?: unknown) {
  const method = body === undefined ? "GET" : "POST";
  const r = await call(stack, { method, path, body }, { authorization: `Token ${f.keys.owner}` });
  if (r.status !== 200) throw new Error(`${method} ${path} -> ${r.status} ${JSON.stringify(r.body)}`);
  assertDocumented(stack, method, path, r.body);
  return r.body;
}
async function fails(path: string, status: number, body?: unknown) {
  const r = await call(
    stack,
    { method: body === undefined ? "GET" : "POST", path, body },
    { authorization: `Token ${f.keys.owner}` },
  );
  expect(r.status).toBe(status);
  expect(Object.keys(r.body)).toEqual(["error"]);
  return r.body.error as string;
}

describe("session reads", () => {
  test("transcript: complete, in order, lean previews heavy tool input with its length, full inlines it", async () => {
    const lean = await read(`${S}/transcript`);
    expect(lean.status).toBe("complete");
    expect(lean.retryAfterSeconds).toBeUndefined();
    // Like every materialized read: which maturation this is, and when it was computed.
    expect(lean.maturationCount).toBe(1);
    expect(Date.parse(lean.computedAt)).toBeGreaterThan(0);
    // Order is the processor's (docs/analysis.md); the read returns it as stored.
    expect(lean.items.map((i: any) => i.type).sort()).toEqual([
      "assistant",
      "event",
      "system",
      "tool_call",
      "tool_result",
      "user",
    ]);
    expect(lean.items[0].type).toBe("system");
    const call = lean.items.find((i: any) => i.type === "tool_call");
    expect(call.contentTruncated).toBe(true);
    expect(call.content.length).toBe(500);
    expect(call.contentLength).toBeGreaterThan(800);
    const full = await read(`${S}/transcript?content=full`);
    const fullCall = full.items.find((i: any) => i.type === "tool_call");
    expect(fullCall.content.length).toBe(call.contentLength);
    expect(full.counts).toEqual({ total: 6, returned: 6 });
    expect(full.items.find((i: any) => i.type === "assistant").spanAttributes).toBeDefined();
    expect(lean.items.find((i: any) => i.type === "assistant").spanAttributes).toBeUndefined();
  });

  test("transcript responses carry JSON content type and the request id", async () => {
    const res = await stack.platformRequest(`${S}/transcript`, {
      token: f.keys.owner,
      headers: { "x-request-id": "req-42" },
    });
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("x-request-id")).toBe("req-42");
  });

  test("transcript pages with limit/offset and rejects a limit over 500 naming it", async () => {
    const p1 = await read(`${S}/transcript?limit=4`);
    expect(p1.pagination).toEqual({
      limit: 4,
      offset: 0,
      total: 6,
      hasMore: true,
      nextOffset: 4,
      nextCursor: expect.any(String),
    });
    const p2 = await read(`${S}/transcript?limit=4&offset=4`);
    expect(p2.items.length).toBe(2);
    expect(p2.pagination.hasMore).toBe(false);
    expect(await fails(`${S}/transcript?limit=501`, 400)).toContain("limit");
    expect(await fails(`${S}/transcript?content=huge`, 400)).toContain("content");
  });

  test("transcript is processing before any materialization and partial when newer activity exists", async () => {
    const sql = stack.database.sql;
    await sql`insert into sessions (tenant_id, trace_service_id, session_id, first_activity_at, last_activity_at, last_ingested_at, activity_seq)
      select tenant_id, id, 'fresh', now(), now(), now(), 1 from trace_services where tenant_id = ${f.a.tenantId} and name = 'support-bot'`;
    const processing = await read("/telemetry/otel/sessions/support-bot/fresh/transcript");
    expect(processing).toMatchObject({ status: "processing", items: [], truncated: false });
    expect(processing.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    const tldr = await read("/telemetry/otel/sessions/support-bot/fresh/tldr");
    expect(tldr).toMatchObject({ status: "processing", tldr: null, computedAt: null });

    await sql`update sessions set activity_seq = activity_seq + 1 where session_id = 'conv-2' and tenant_id = ${f.a.tenantId}`;
    const partial = await read("/telemetry/otel/sessions/support-bot/conv-2/transcript");
    expect(partial.status).toBe("partial");
    expect(partial.items.length).toBeGreaterThan(0);
    expect(partial.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    await sql`update sessions set activity_seq = activity_seq - 1 where session_id = 'conv-2' and tenant_id = ${f.a.tenantId}`;
  });

  test("one transcript item in full with reasoning and raw span attributes; unknown item is 404", async () => {
    const body = await read(`${S}/transcript/items/${f.ids.itemId}`);
    expect(body.item.id).toBe(f.ids.itemId);
    expect(body.item.content).toContain("pending refund");
    expect(body.reasoning).toBe("The tool says one charge.");
    expect(body.spanAttributes["gen_ai.request.model"]).toBe("gpt-4o-mini");
    expect(await fails(`${S}/transcript/items/itm_nope`, 404)).toBe("no such transcript item");
  });

  test("traces, spans and events of the session", async () => {
    const traces = await read(`${S}/traces`);
    expect(traces.traces.map((t: any) => t.traceId)).toEqual(["tr-1", "tr-2"]);
    expect(traces.traces[0]).toMatchObject({
      sessionId: "conv-1",
      serviceName: "support-bot",
      provider: "openai",
      status: "matured",
      usage: { promptTokens: 120, completionTokens: 40, totalTokens: 160 },
    });
    const spans = await read(`${S}/spans?limit=3`);
    expect(spans.spans.length).toBe(3);
    expect(spans.pagination).toMatchObject({ hasMore: true, nextOffset: 3, total: null });
    const events = await read(`${S}/events`);
    expect(events.events).toHaveLength(1);
    expect(events.events[0]).toMatchObject({
      name: "payment.failed",
      severityNumber: 17,
      traceId: "tr-1",
      body: { reason: "gateway timeout" },
      attributes: { "http.status": 502 },
    });
  });

  test("tree nests llm spans under their call; graph has child and next edges", async () => {
    const tree = await read(`${S}/tree`);
    expect(tree.spanCount).toBe(4);
    expect(tree.roots.map((r: any) => [r.traceId, r.kind, r.children.map((c: any) => c.kind)])).toEqual([
      ["tr-1", "trace", ["llm"]],
      ["tr-2", "trace", ["llm"]],
    ]);
    const graph = await read(`${S}/graph`);
    expect(graph.nodes).toHaveLength(4);
    expect(graph.edges.filter((e: any) => e.kind === "child")).toHaveLength(2);
    expect(graph.edges.filter((e: any) => e.kind === "next")).toEqual([
      { source: tree.roots[0].spanId, target: tree.roots[1].spanId, kind: "next" },
    ]);
  });

  test("tldr, problem analysis, costs and tool schemas", async () => {
    const tldr = await read(`${S}/tldr`);
    expect(tldr).toMatchObject({ status: "complete", maturationCount: 1 });
    expect(typeof tldr.tldr).toBe("string");
    const problems = await read(`${S}/problem-analysis`);
    const ours = problems.problems.filter((p: any) => p.detector === "test_detector");
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatchObject({
      issueId: f.ids.issueId,
      issueTitle: "Customer reports double charge",
      severity: "high",
      traceId: "tr-1",
    });
    expect(problems.problemCount).toBe(problems.problems.length);
    // Computed by the processor at maturation (docs/analysis.md): both issues meet here.
    const cost = await read(`${S}/cost-by-model`);
    expect(cost.currency).toBe("USD");
    expect(cost.models).toEqual([
      expect.objectContaining({ model: "gpt-4o-mini", calls: 2, promptTokens: 240, completionTokens: 80 }),
    ]);
    const tools = await read(`${S}/tool-costs`);
    expect(tools.tools).toEqual([expect.objectContaining({ toolName: "lookup_invoice", calls: 1 })]);
    const schemas = await read(`${S}/tool-schemas`);
    expect(schemas.toolSchemas.map((s: any) => s.name).sort()).toEqual(["lookup_invoice", "test_tool"]);
    const fromRequest = schemas.toolSchemas.find((s: any) => s.name === "lookup_invoice");
    expect(fromRequest.schema.parameters.properties.number).toEqual({ type: "string" });
  });

  test("there is no GET on S itself, and an unknown session is 404", async () => {
    expect(await fails(S, 404)).toBe("not found");
    expect(await fails("/telemetry/otel/sessions/support-bot/nope/transcript", 404)).toBe("no such session");
    expect(await fails("/telemetry/otel/sessions/nope-bot/conv-1/transcript", 404)).toBe("no such service");
  });
});

describe("metrics and intents", () => {
  test("session metrics, one metric by name, unknown metric 404", async () => {
    const m = await read("/telemetry/metrics/session/support-bot/conv-1");
    expect(m).toMatchObject({ sessionId: "conv-1", status: "complete", maturationCount: 1 });
    expect(m.metrics.turns).toBe(1);
    const one = await read("/telemetry/metrics/session/conv-1/turns");
    expect(one).toMatchObject({ sessionId: "conv-1", serviceName: "support-bot", name: "turns", value: 1 });
    expect(await fails("/telemetry/metrics/session/conv-1/noSuchMetric", 404)).toContain("noSuchMetric");
    expect(await fails("/telemetry/metrics/session/nope/turns", 404)).toBe("no such session");
  });

  test("intents on plan pro; 400 without trace_service_name", async () => {
    const body = await read("/telemetry/otel/sessions/conv-1/intents?trace_service_name=support-bot");
    expect(body.intents).toEqual([
      expect.objectContaining({ name: "billing_question", score: expect.closeTo(0.9, 5) }),
    ]);
    expect(await fails("/telemetry/otel/sessions/conv-1/intents", 400)).toBe(
      "trace_service_name query parameter is required",
    );
  });
});

describe("sessions/filtered", () => {
  const F = "/telemetry/otel/sessions/filtered";
  const ids = async (filters: unknown[], extra: Record<string, unknown> = {}) =>
    (await read(F, { serviceName: "support-bot", filters, ...extra })).sessions.map((s: any) => s.sessionId);

  test("by id, status, label, time range and metrics", async () => {
    expect(await ids([{ field: "sessionId", operator: "equals", value: "conv-1" }])).toEqual(["conv-1"]);
    expect(
      await ids([{ field: "sessionId", operator: "in", value: ["conv-1", "conv-2"] }], {
        sort: { field: "sessionId", direction: "asc" },
      }),
    ).toEqual(["conv-1", "conv-2"]);
    expect(await ids([{ field: "label", operator: "equals", value: "vip" }])).toEqual(["conv-1"]);
    expect(await ids([{ field: "label", operator: "in", value: ["gold", "vip"] }])).toEqual(["conv-1"]);
    expect(
      await ids([
        { field: "label", operator: "notEquals", value: "vip" },
        { field: "sessionId", operator: "startsWith", value: "conv" },
      ]),
    ).toEqual(["conv-2"]);
    expect(await ids([{ field: "errors", operator: "gte", value: 1 }])).toEqual(["conv-1"]);
    expect(await ids([{ field: "totalTokens", operator: "gt", value: 5000 }])).toEqual(["conv-2"]);
    expect(await ids([{ field: "metrics.totalTokens", operator: "gt", value: 5000 }])).toEqual(["conv-2"]);
    expect(
      await ids(
        [
          { field: "status", operator: "equals", value: "matured" },
          { field: "sessionId", operator: "startsWith", value: "conv" },
        ],
        { sort: { field: "sessionId", direction: "asc" } },
      ),
    ).toEqual(["conv-1", "conv-2"]);
    const cut = new Date(f.t0.getTime() + 5_000).toISOString(); // conv-1 starts at t0, conv-2 at t0 + 10 s
    expect(
      await ids([
        { field: "firstActivityAt", operator: "gte", value: cut },
        { field: "sessionId", operator: "startsWith", value: "conv" },
      ]),
    ).toEqual(["conv-2"]);
    const row = (
      await read(F, {
        serviceName: "support-bot",
        filters: [{ field: "sessionId", operator: "equals", value: "conv-1" }],
      })
    ).sessions[0];
    expect(row).toMatchObject({
      status: "matured",
      labels: ["vip"],
      maturationCount: 1,
      metrics: { turns: 1, errors: 1 },
    });
  });

  test("sorting and offset paging, with and without the total count", async () => {
    const base = {
      serviceName: "support-bot",
      filters: [{ field: "sessionId", operator: "startsWith", value: "conv" }],
      sort: { field: "totalTokens", direction: "desc" },
      limit: 1,
    };
    const p1 = await read(F, base);
    expect(p1.sessions[0].sessionId).toBe("conv-2");
    expect(p1.pagination).toEqual({
      limit: 1,
      offset: 0,
      total: 2,
      hasMore: true,
      nextOffset: 1,
      nextCursor: expect.any(String),
    });
    const p2 = await read(F, { ...base, offset: 1, skipTotalCount: true });
    expect(p2.sessions[0].sessionId).toBe("conv-1");
    expect(p2.pagination).toEqual({
      limit: 1,
      offset: 1,
      total: null,
      hasMore: false,
      nextOffset: null,
      nextCursor: null,
    });
  });

  test("unknown field or operator, bad value and bad sort are 400 naming them", async () => {
    expect(
      await fails(F, 400, {
        serviceName: "support-bot",
        filters: [{ field: "colour", operator: "equals", value: "x" }],
      }),
    ).toContain('unknown filter field "colour"');
    expect(
      await fails(F, 400, {
        serviceName: "support-bot",
        filters: [{ field: "sessionId", operator: "near", value: "x" }],
      }),
    ).toContain('unknown operator "near"');
    expect(
      await fails(F, 400, {
        serviceName: "support-bot",
        filters: [{ field: "errors", operator: "gte", value: "one" }],
      }),
    ).toContain("filters[0].value");
    expect(await fails(F, 400, { serviceName: "support-bot", sort: { field: "label" } })).toContain("sort.field");
    expect(await fails(F, 400, { filters: [] })).toContain("serviceName");
    expect(await fails(F, 400, { serviceName: "support-bot", limit: 0 })).toContain("limit");
    expect(await fails(F, 400, { serviceName: "support-bot", filter: [] })).toBe("invalid filter: unknown field");
    expect(
      await fails(F, 400, {
        serviceName: "support-bot",
        filters: [{ field: "turns", operator: "gt", value: 1, op: "x" }],
      }),
    ).toBe("invalid filters[0].op: unknown field");
    expect(await fails(F, 400, { serviceName: "support-bot", sort: { field: "turns", direction: "up" } })).toBe(
      "invalid sort.direction: must be asc or desc",
    );
  });
});

describe("trace reads", () => {
  test("the trace with request and responses; serviceName required; plural path 404", async () => {
    const tr = await read("/telemetry/otel/trace/tr-2?serviceName=support-bot");
    expect(tr).toMatchObject({ traceId: "tr-2", sessionId: "conv-1", status: "matured", spanCount: 2 });
    expect(tr.request.messages).toHaveLength(4);
    expect(tr.responses[0].choices[0].message.content).toContain("pending refund");
    expect(await fails("/telemetry/otel/trace/tr-2", 400)).toBe("serviceName query parameter is required");
    expect(await fails("/telemetry/otel/traces/tr-2?serviceName=support-bot", 404)).toBe("not found");
    expect(await fails("/telemetry/otel/trace/nope?serviceName=support-bot", 404)).toBe("no such trace");
  });

  test("spans, one span, events and metrics of a trace", async () => {
    const spans = await read("/telemetry/otel/spans/support-bot/tr-2");
    expect(spans.spans.map((s: any) => s.kind)).toEqual(["trace", "llm"]);
    const span = await read(`/telemetry/otel/spans/${f.ids.spanId}`);
    expect(span).toMatchObject({ spanId: f.ids.spanId, traceId: "tr-2", kind: "llm", serviceName: "support-bot" });
    expect(await fails("/telemetry/otel/spans/nope", 404)).toBe("no such span");
    const events = await read("/telemetry/otel/events/support-bot/tr-1");
    expect(events.events.map((e: any) => e.name)).toEqual(["payment.failed"]);
    expect((await read("/telemetry/otel/events/support-bot/tr-2")).events).toEqual([]);
    expect(await fails("/telemetry/otel/events/support-bot/nope", 404)).toBe("no such trace");
    const metrics = await read("/telemetry/metrics/trace/tr-3");
    expect(metrics).toMatchObject({ traceId: "tr-3", status: "complete", metrics: { totalTokens: 7000 } });
  });

  test("traces/filtered by model and session, sorted", async () => {
    const body = await read("/telemetry/otel/traces/filtered", {
      serviceName: "support-bot",
      filters: [{ field: "sessionId", operator: "equals", value: "conv-1" }],
      sort: { field: "startTime", direction: "asc" },
    });
    expect(body.traces.map((t: any) => t.traceId)).toEqual(["tr-1", "tr-2"]);
    expect(body.pagination.total).toBe(2);
    const none = await read("/telemetry/otel/traces/filtered", {
      serviceName: "support-bot",
      filters: [{ field: "model", operator: "equals", value: "gpt-5" }],
    });
    expect(none.traces).toEqual([]);
    const heavy = await read("/telemetry/otel/traces/filtered", {
      serviceName: "support-bot",
      filters: [{ field: "metrics.totalTokens", operator: "gte", value: 7000 }],
    });
    expect(heavy.traces.map((t: any) => t.traceId)).toEqual(["tr-3"]);
    const bySize = await read("/telemetry/otel/traces/filtered", {
      serviceName: "support-bot",
      filters: [{ field: "traceId", operator: "notIn", value: ["tr-1"] }],
      sort: { field: "durationMs", direction: "asc" },
      limit: 5,
    });
    expect(bySize.traces.map((t: any) => t.traceId).sort()).toEqual(["tr-2", "tr-3"]);
  });
});

describe("issues and findings", () => {
  test("issues/filtered by severity; stats; breakdown", async () => {
    const issues = await read("/telemetry/otel/issues/filtered", {
      service_name: "support-bot",
      filters: [{ field: "detector", operator: "equals", value: "test_detector" }],
    });
    expect(issues.issues).toEqual([
      expect.objectContaining({ issueId: f.ids.issueId, occurrences: 2, affectedSessions: 2, severity: "high" }),
    ]);
    const none = await read("/telemetry/otel/issues/filtered", {
      service_name: "support-bot",
      filters: [
        { field: "severity", operator: "equals", value: "critical" },
        { field: "detector", operator: "equals", value: "test_detector" },
      ],
    });
    expect(none.issues).toEqual([]);
    // Integer fields against fractions and bounds past int4 compare as the integer bound they
    // imply (docs/platform-api.md), as on sessions: they answered 500.
    const ids = async (field: string, operator: string, value: number, path = "issues") =>
      (
        await read(`/telemetry/otel/${path}/filtered`, {
          service_name: "support-bot",
          filters: [
            { field: "detector", operator: "equals", value: "test_detector" },
            { field, operator, value },
          ],
        })
      )[path].map((i: any) => i.issueId);
    expect(await ids("occurrences", "equals", 1.5)).toEqual([]);
    expect(await ids("occurrences", "gt", 1.5)).toEqual([f.ids.issueId]);
    expect(await ids("affectedSessions", "lt", 3e9)).toEqual([f.ids.issueId]);
    expect(await ids("severityRank", "gte", 2.5)).toEqual([f.ids.issueId]);
    expect(await ids("severityRank", "gt", -3e9)).toEqual([f.ids.issueId]);
    expect((await ids("severityRank", "gte", 2.5, "findings")).length).toBeGreaterThan(0);
    expect(await ids("severityRank", "gt", 3e9, "findings")).toEqual([]);
    expect(await fails("/telemetry/otel/issues/filtered", 400, { serviceName: "support-bot" })).toBe(
      "invalid serviceName: unknown field",
    );
    expect(await fails("/telemetry/otel/issues/filtered", 400, {})).toContain("service_name");

    const stats = await read("/telemetry/otel/issues/support-bot/stats", {});
    expect(stats.byDetector.test_detector).toBe(1);
    expect(stats.occurrences).toBeGreaterThanOrEqual(2);
    expect(await fails("/telemetry/otel/issues/support-bot/stats", 400, { since: "2025-01-01T00:00:00Z" })).toBe(
      "invalid since: unknown field",
    );
    const later = await read("/telemetry/otel/issues/support-bot/stats", {
      from: new Date(f.t0.getTime() + 5_000).toISOString(),
    });
    expect(later.topIssues.find((i: any) => i.issueId === f.ids.issueId)?.occurrencesInRange).toBe(1);

    const b = await read(`/telemetry/otel/issues/${f.ids.issueId}/breakdown?service_name=support-bot`);
    expect(b.issue.issueId).toBe(f.ids.issueId);
    expect(b.topSessions.map((s: any) => s.sessionId).sort()).toEqual(["conv-1", "conv-2"]);
    expect(b.recentFindings).toHaveLength(2);
    expect(b.byEnvironment).toEqual([{ environment: "test", occurrences: 2 }]);
    expect(await fails(`/telemetry/otel/issues/${f.ids.issueId}/breakdown`, 400)).toBe(
      "service_name query parameter is required",
    );
    expect(await fails("/telemetry/otel/issues/not-a-uuid/breakdown?service_name=support-bot", 404)).toBe(
      "no such issue",
    );
    expect(await fails(`/telemetry/otel/issues/${f.ids.issueId}/breakdown?service_name=billing-bot`, 404)).toBe(
      "no such issue",
    );
  });

  test("findings/filtered by session; stats by day", async () => {
    const sorted = await read("/telemetry/otel/findings/filtered", {
      service_name: "support-bot",
      sort: { field: "severityRank", direction: "desc" },
      skip_total_count: true,
      limit: 1,
    });
    expect(sorted.findings[0].severity).toMatch(/high|critical/);
    expect(sorted.pagination.total).toBeNull();
    const found = await read("/telemetry/otel/findings/filtered", {
      service_name: "support-bot",
      filters: [
        { field: "sessionId", operator: "equals", value: "conv-2" },
        { field: "detector", operator: "equals", value: "test_detector" },
      ],
    });
    expect(found.findings).toEqual([
      expect.objectContaining({ sessionId: "conv-2", issueId: f.ids.issueId, traceId: "tr-3" }),
    ]);
    const stats = await read("/telemetry/otel/findings/support-bot/stats");
    expect(stats.byDetector.test_detector).toBe(2);
    expect(stats.byDay.reduce((n: number, d: any) => n + d.count, 0)).toBe(stats.total);
    expect(await fails("/telemetry/otel/findings/support-bot/stats?from=yesterday", 400)).toContain("from");
  });
});
