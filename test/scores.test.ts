// Scores through both doors (ingest and platform API), stored by natural key and idempotency key,
// read back on session rows (rollups, filters, sort) and on the trace read. docs/scores.md.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { bootstrapTenant, createUser } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { chatTrace } from "./helpers/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let serverDsn: string;
let clientDsn: string;
let memberKey: string;
let viewerKey: string;
const SERVICE = "score-app";

const bearer = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });
const scoreRows = (where: string) =>
  stack.database.sql.unsafe(`select * from scores where ${where} order by created_at, id`) as Promise<any[]>;
async function filtered(body: Record<string, unknown>, token = tenant.platformKey) {
  const res = await stack.platformRequest("/telemetry/otel/sessions/filtered", {
    method: "POST",
    token,
    body: JSON.stringify({ serviceName: SERVICE, ...body }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  tenant = await bootstrapTenant(stack.database.db, { name: "scores" });
  const db = stack.database.db;
  serverDsn = (await createApiKey(db, { kind: "dsn-server", tenantId: tenant.tenantId, serviceName: SERVICE })).key;
  clientDsn = (
    await createApiKey(db, {
      kind: "dsn-client",
      tenantId: tenant.tenantId,
      serviceName: SERVICE,
      origins: ["https://shop.example"],
    })
  ).key;
  const member = await createUser(db, { tenantId: tenant.tenantId, email: "m@s.test", role: "member", projectIds: [] });
  const viewer = await createUser(db, { tenantId: tenant.tenantId, email: "v@s.test", role: "viewer", projectIds: [] });
  memberKey = (await createApiKey(db, { kind: "platform", userId: member.id })).key;
  viewerKey = (await createApiKey(db, { kind: "platform", userId: viewer.id })).key;
  // Their project membership is granted once the service exists (created by the first ingest).
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe("ingest door POST /raw/scores", () => {
  test("a score that arrives before its session is kept and joins the session once it exists", async () => {
    const res = await stack.ingestRequest(
      "/raw/scores",
      { session_id: "early-1", name: "helpfulness", value: 0.25, comment: "meh" },
      bearer(serverDsn),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "success" });
    const [row] = await waitFor(async () => {
      const rows = await scoreRows(`session_id = 'early-1'`);
      return rows.length ? rows : null;
    });
    expect(row).toMatchObject({
      name: "helpfulness",
      value: 0.25,
      source: "api",
      target: "session",
      data_type: "numeric",
    });
    expect((await stack.database.sql`select 1 from sessions where session_id = 'early-1'`).length).toBe(0);

    const trace = chatTrace({
      sessionId: "early-1",
      serviceName: SERVICE,
      messages: [{ role: "user", content: "hi" }],
      reply: "yo",
    });
    expect((await stack.ingestRequest("/raw/traces", trace, bearer(tenant.telemetryKey))).status).toBe(200);
    const page = await waitFor(
      async () => {
        const r = await filtered({ filters: [{ field: "sessionId", operator: "equals", value: "early-1" }] });
        return r.body.sessions?.[0]?.status === "matured" ? r.body : null;
      },
      { what: "matured early-1", timeoutMs: 30_000 },
    );
    expect(page.sessions[0].scores).toEqual({ helpfulness: { count: 1, mean: 0.25 } });
  }, 60_000);

  test("a retried request, and a second body with the same idempotency key, are stored once", async () => {
    const body = { session_id: "retry-1", name: "thumbs", value: true };
    for (let i = 0; i < 3; i++)
      expect((await stack.ingestRequest("/raw/scores", body, bearer(serverDsn))).status).toBe(200);
    const keyed = { session_id: "retry-1", name: "stars", value: 4, idempotency_key: "review-77" };
    expect((await stack.ingestRequest("/raw/scores", keyed, bearer(serverDsn))).status).toBe(200);
    expect((await stack.ingestRequest("/raw/scores", { ...keyed, value: 1 }, bearer(serverDsn))).status).toBe(200);
    const rows = await waitFor(async () => {
      const r = await scoreRows(`session_id = 'retry-1'`);
      return r.length >= 2 ? r : null;
    });
    // Give a wrongly duplicated message time to land before counting.
    await Bun.sleep(500);
    const again = await scoreRows(`session_id = 'retry-1'`);
    expect(again.length).toBe(2);
    expect(rows.find((r) => r.name === "stars").value).toBe(4);
    expect(rows.find((r) => r.name === "thumbs")).toMatchObject({ data_type: "boolean", value: 1 });
  });

  test("client DSN: allowed origin gets CORS and an end_user score; other origin 403; reviewer refused", async () => {
    const body = { trace_id: "tr-browser-1", name: "thumbs", value: false };
    const ok = await stack.ingestRequest("/raw/scores", body, bearer(clientDsn, { origin: "https://shop.example" }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    const other = await stack.ingestRequest("/raw/scores", body, bearer(clientDsn, { origin: "https://evil.example" }));
    expect(other.status).toBe(403);
    const posing = await stack.ingestRequest(
      "/raw/scores",
      { ...body, source: "api" },
      bearer(clientDsn, { origin: "https://shop.example" }),
    );
    expect(posing.status).toBe(403);
    expect((await posing.json()).error).toContain("source");
    const reviewer = await stack.ingestRequest("/raw/scores", { ...body, source: "reviewer" }, bearer(serverDsn));
    expect(reviewer.status).toBe(403);
    const other2 = await stack.ingestRequest("/raw/scores", { ...body, service_name: "elsewhere" }, bearer(serverDsn));
    expect(other2.status).toBe(403);
    const [row] = await waitFor(async () => {
      const r = await scoreRows(`trace_id = 'tr-browser-1'`);
      return r.length ? r : null;
    });
    expect(row).toMatchObject({ source: "end_user", target: "trace", value: 0 });
  });

  test("bad bodies are 400 naming the field and store nothing", async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: "x", value: 1 }, "session_id"],
      [{ session_id: "a", trace_id: "b", name: "x", value: 1 }, "session_id"],
      [{ session_id: "a", value: 1 }, "name"],
      [{ session_id: "a", name: "x" }, "value"],
      [{ session_id: "a", name: "x", value: { nested: 1 } }, "value"],
      [{ session_id: "a", name: "x", value: 1, extra: true }, "extra"],
      [{ session_id: "a", name: "x", value: 1, comment: "c".repeat(2001) }, "comment"],
      [{ session_id: "a", name: "\n", value: 1 }, "name"],
      [[1], "body"],
    ];
    for (const [body, field] of cases) {
      const res = await stack.ingestRequest("/raw/scores", body, bearer(serverDsn));
      expect(res.status).toBe(400);
      expect((await res.json()).error).toContain(field);
    }
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (body) => {
        const res = await stack.ingestRequest("/raw/scores", body, bearer(serverDsn));
        expect([200, 400, 403]).toContain(res.status);
      }),
      { numRuns: 60 },
    );
    expect((await scoreRows(`session_id = 'a'`)).length).toBe(0);
  });
});

describe("platform API", () => {
  test("member writes (201, then 200 on the same key), viewer is 403, declared names are enforced", async () => {
    const [svc] = await stack.database.sql<{ id: string; project_id: string }[]>`
      select id, project_id from trace_services where name = ${SERVICE}`;
    await stack.database.sql`insert into project_memberships (user_id, project_id, tenant_id)
      select id, ${svc.project_id}, tenant_id from users where email in ('m@s.test', 'v@s.test')`;
    const post = (body: unknown, token = memberKey) =>
      stack.platformRequest("/scores", { method: "POST", token, body: JSON.stringify(body) });
    const body = { service_name: SERVICE, session_id: "early-1", name: "quality", value: "good", source: "reviewer" };
    const first = await post(body);
    expect(first.status).toBe(201);
    const created = (await first.json()) as any;
    expect(created).toMatchObject({ name: "quality", value: "good", dataType: "categorical", source: "reviewer" });
    const second = await post(body);
    expect(second.status).toBe(200);
    expect(((await second.json()) as any).scoreId).toBe(created.scoreId);
    expect((await post(body, viewerKey)).status).toBe(403);

    const declare = await stack.platformRequest(`/scores/configs/${SERVICE}/quality`, {
      method: "PUT",
      token: tenant.platformKey,
      body: JSON.stringify({ data_type: "categorical", categories: ["good", "bad"] }),
    });
    expect(declare.status).toBe(200);
    const memberDeclares = await stack.platformRequest(`/scores/configs/${SERVICE}/other`, {
      method: "PUT",
      token: memberKey,
      body: JSON.stringify({ data_type: "numeric" }),
    });
    expect(memberDeclares.status).toBe(403);
    const wrong = await post({ ...body, value: "awful", idempotency_key: "k2" });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as any).error).toContain("not one of good, bad");
    const wrongType = await post({ ...body, value: 3, idempotency_key: "k3" });
    expect(wrongType.status).toBe(400);
    const configs = await stack.platformRequest(`/scores/configs/${SERVICE}`, { token: viewerKey });
    expect(((await configs.json()) as any).configs).toEqual([
      expect.objectContaining({ name: "quality", dataType: "categorical", categories: ["good", "bad"] }),
    ]);

    const list = await stack.platformRequest(`/telemetry/otel/sessions/${SERVICE}/early-1/scores`, {
      token: viewerKey,
    });
    const scores = ((await list.json()) as any).scores;
    expect(scores.map((s: any) => s.name)).toEqual(["helpfulness", "quality"]);
  });

  test("rollups, filters and sort keys on sessions/filtered; the trace read carries its scores", async () => {
    for (const [sessionId, value] of [
      ["rank-a", 0.9],
      ["rank-b", 0.1],
      ["rank-c", 0.5],
    ] as const) {
      const trace = chatTrace({
        sessionId,
        serviceName: SERVICE,
        messages: [{ role: "user", content: "q" }],
        reply: "a",
      });
      expect((await stack.ingestRequest("/raw/traces", trace, bearer(tenant.telemetryKey))).status).toBe(200);
      for (const v of [value, value / 2])
        expect(
          (
            await stack.ingestRequest(
              "/raw/scores",
              { session_id: sessionId, name: "helpfulness", value: v },
              bearer(serverDsn),
            )
          ).status,
        ).toBe(200);
    }
    await waitFor(async () => ((await scoreRows(`session_id like 'rank-%'`)).length === 6 ? true : null));
    // Scores and traces are written apart: wait for the three sessions too, then read once (it
    // waited for two matches only, and rank-b's session could still be missing from the next read).
    const rankFilter = { field: "sessionId", operator: "startsWith", value: "rank-" };
    await waitFor(async () => ((await filtered({ filters: [rankFilter] })).body.sessions?.length === 3 ? true : null));
    const top = await filtered({
      filters: [rankFilter, { field: "scores.helpfulness", operator: "gte", value: 0.3 }],
      sort: { field: "scores.helpfulness", direction: "desc" },
    });
    expect(top.status).toBe(200);
    expect(top.body.sessions.map((s: any) => s.sessionId)).toEqual(["rank-a", "rank-c"]);
    expect(top.body.sessions[0].scores.helpfulness.count).toBe(2);
    expect(top.body.sessions[0].scores.helpfulness.mean).toBeCloseTo(0.675, 6);
    expect(top.body.pagination.total).toBe(2);

    const asc = await filtered({
      filters: [rankFilter],
      sort: { field: "scores.helpfulness", direction: "asc" },
    });
    expect(asc.body.sessions.map((s: any) => s.sessionId)).toEqual(["rank-b", "rank-c", "rank-a"]);
    const bad = await filtered({ filters: [{ field: "scores.helpfulness", operator: "contains", value: "x" }] });
    expect(bad.status).toBe(400);

    // The trace read: a score of a trace id, whether it came before or after the trace.
    const [trace] = await stack.database.sql<
      { trace_id: string }[]
    >`select trace_id from traces where session_id = 'rank-a'`;
    expect(
      (
        await stack.ingestRequest(
          "/raw/scores",
          { trace_id: trace.trace_id, name: "correct", value: true },
          bearer(serverDsn),
        )
      ).status,
    ).toBe(200);
    const read = await waitFor(async () => {
      const r = await stack.platformRequest(`/telemetry/otel/trace/${trace.trace_id}?serviceName=${SERVICE}`, {
        token: tenant.platformKey,
      });
      const b = (await r.json()) as any;
      return b.scores?.length ? b : null;
    });
    expect(read.scores).toEqual([expect.objectContaining({ name: "correct", value: true, dataType: "boolean" })]);
  }, 60_000);
});

test("a score is one item type of the batch door: same checks, source rule and stored row as /raw/scores", async () => {
  const res = await stack.ingestRequest(
    "/raw/batch",
    {
      items: [
        { type: "score", body: { session_id: "batch-1", name: "thumbs", value: true } },
        { type: "score", body: { session_id: "batch-1", name: "thumbs", value: true, source: "reviewer" } },
        { type: "score", body: { name: "thumbs", value: true } },
      ],
    },
    bearer(serverDsn),
  );
  expect(res.status).toBe(200);
  const answer = (await res.json()) as any;
  expect(answer.status).toBe("partial");
  expect(answer.items[0]).toEqual({ status: "accepted" });
  expect(answer.items[1].status).toBe("refused");
  expect(answer.items[2].error).toContain("body.session_id");
  // The same body again through the single door: the same derived idempotency key, one row.
  const single = await stack.ingestRequest(
    "/raw/scores",
    { session_id: "batch-1", name: "thumbs", value: true },
    bearer(serverDsn),
  );
  expect(single.status).toBe(200);
  const rows = await waitFor(async () => {
    const r = await scoreRows(`session_id = 'batch-1'`);
    return r.length ? r : null;
  });
  await Bun.sleep(300);
  expect((await scoreRows(`session_id = 'batch-1'`)).length).toBe(1);
  expect(rows[0]).toMatchObject({ source: "api", value: 1 });
});
