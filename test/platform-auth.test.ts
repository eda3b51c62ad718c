import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createTestStack, type TestStack } from "./helpers/stack";
import { call, readEndpoints, seedPlatform, type PlatformFixture } from "./helpers/platform";

let stack: TestStack;
let f: PlatformFixture;
let endpoints: ReturnType<typeof readEndpoints>;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  f = await seedPlatform(stack);
  endpoints = readEndpoints(f);
});
afterAll(() => stack.stop());

const label = (e: { method: string; path: string }) => `${e.method} ${e.path}`;

/** Runs every endpoint with the headers and returns "METHOD path -> status" lines (one diff shows all). */
async function matrix(headers: Record<string, string>, list = endpoints) {
  const out: Record<string, { status: number; body: unknown }> = {};
  for (const e of list) out[label(e)] = await call(stack, e, headers);
  return out;
}
const statuses = (m: Record<string, { status: number }>) =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.status]));
const every = (status: number, list = endpoints) => Object.fromEntries(list.map((e) => [label(e), status]));

describe("credentials: only `Token <platform key>` of a live user works; every failure is the same bare 401", () => {
  const bad: Array<[string, () => Record<string, string>]> = [
    ["no header", () => ({})],
    ["empty Token", () => ({ authorization: "Token " })],
    ["malformed (two words)", () => ({ authorization: `Token ${f.keys.owner} extra` })],
    ["Basic", () => ({ authorization: `Basic ${btoa(`user:${f.keys.owner}`)}` })],
    ["platform key as Bearer", () => ({ authorization: `Bearer ${f.keys.owner}` })],
    ["platform key without scheme", () => ({ authorization: f.keys.owner })],
    ["telemetry key as Token", () => ({ authorization: `Token ${f.bad.telemetry}` })],
    ["telemetry key as Bearer", () => ({ authorization: `Bearer ${f.bad.telemetry}` })],
    ["server DSN as Token", () => ({ authorization: `Token ${f.bad.serverDsn}` })],
    ["server DSN as Bearer", () => ({ authorization: `Bearer ${f.bad.serverDsn}` })],
    ["client DSN as Token", () => ({ authorization: `Token ${f.bad.clientDsn}` })],
    ["client DSN as Bearer", () => ({ authorization: `Bearer ${f.bad.clientDsn}` })],
    ["revoked platform key", () => ({ authorization: `Token ${f.bad.revoked}` })],
    ["deprovisioned owner's key", () => ({ authorization: `Token ${f.bad.deprovisioned}` })],
    ["unknown key", () => ({ authorization: "Token cel_pk_000000000000000000000000" })],
    [
      "unknown key with another tenant's X-Tenant-ID",
      () => ({ authorization: "Token cel_pk_x", "x-tenant-id": f.a.tenantId }),
    ],
  ];
  for (const [name, headers] of bad) {
    test(`${name}: 401 {"error":"unauthorized"} on every endpoint`, async () => {
      const m = await matrix(headers());
      expect(statuses(m)).toEqual(every(401));
      for (const v of Object.values(m)) expect(v.body).toEqual({ error: "unauthorized" });
    });
  }
});

describe("roles and project membership", () => {
  test("owner, admin, and member/viewer of the service's project read every endpoint", async () => {
    for (const role of ["owner", "admin", "member", "viewer"] as const) {
      const m = await matrix({ authorization: `Token ${f.keys[role]}` });
      expect({ role, statuses: statuses(m) }).toEqual({ role, statuses: every(200) });
    }
  });

  test("a same-tenant user outside the service's project: 403 where the service is named, 404 for reads by bare id", async () => {
    const m = statuses(await matrix({ authorization: `Token ${f.keys.outsider}` }));
    const expected = Object.fromEntries(endpoints.map((e) => [label(e), e.bareId ? 404 : 403]));
    expect(m).toEqual(expected);
    const r = await call(stack, endpoints[0], { authorization: `Token ${f.keys.outsider}` });
    expect(r.body).toEqual({ error: "your project membership does not cover this service" });
    // Session existence does not leak through the metrics path either.
    const ghost = await call(
      stack,
      { method: "GET", path: "/telemetry/metrics/session/support-bot/ghost-session" },
      { authorization: `Token ${f.keys.outsider}` },
    );
    expect(ghost).toEqual(r);
  });

  test("the outsider reads its own project's service; the viewer of the other project cannot", async () => {
    const e = { method: "GET", path: "/telemetry/otel/sessions/billing-bot/b-1/transcript" };
    expect((await call(stack, e, { authorization: `Token ${f.keys.outsider}` })).status).toBe(200);
    expect((await call(stack, e, { authorization: `Token ${f.keys.viewer}` })).status).toBe(403);
    expect((await call(stack, e, { authorization: `Token ${f.keys.admin}` })).status).toBe(200);
  });

  test("the scheme name is case-insensitive (RFC 9110), the key is not", async () => {
    expect((await call(stack, endpoints[0], { authorization: `token ${f.keys.viewer}` })).status).toBe(200);
    expect((await call(stack, endpoints[0], { authorization: `Token ${f.keys.viewer.toUpperCase()}` })).status).toBe(
      401,
    );
  });

  test("a plan without intents is 402 (before any other check)", async () => {
    const r = await call(
      stack,
      { method: "GET", path: "/telemetry/otel/sessions/g-1/intents?trace_service_name=other-bot" },
      { authorization: `Token ${f.b.platformKey}` },
    );
    expect(r).toEqual({ status: 402, body: { error: "your plan does not include intents" } });
    const missing = await call(
      stack,
      { method: "GET", path: "/telemetry/otel/sessions/g-1/intents" },
      { authorization: `Token ${f.b.platformKey}` },
    );
    expect(missing.status).toBe(402);
  });
});

describe("tenant isolation", () => {
  /** The same endpoint with every tenant-A identifier replaced by one that exists nowhere. */
  const ghost = (e: { method: string; path: string; body?: unknown }) => {
    const swap = (s: string) =>
      s
        .replaceAll("support-bot", "ghost-bot")
        .replaceAll("conv-1", "ghost-1")
        .replaceAll("tr-1", "tr-ghost")
        .replaceAll(f.ids.spanId, "0000000000000000")
        .replaceAll(f.ids.issueId, "00000000-0000-4000-8000-000000000000")
        .replaceAll(f.ids.itemId, "itm_ghost");
    return {
      ...e,
      path: swap(e.path),
      body: e.body === undefined ? undefined : JSON.parse(swap(JSON.stringify(e.body))),
    };
  };

  test("another tenant gets 404 on every endpoint with tenant A's ids, indistinguishable from ids that exist nowhere", async () => {
    const c = await bootstrapTenant(stack.database.db, { name: "initech", plan: "pro", email: "owner@initech.test" });
    for (const [name, key, intents] of [
      ["globex (free)", f.b.platformKey, 402],
      ["initech (pro)", c.platformKey, 404],
    ] as const) {
      const headers = { authorization: `Token ${key}` };
      const real = await matrix(headers);
      const expected = Object.fromEntries(
        endpoints.map((e) => [label(e), e.path.includes("/intents") ? intents : 404]),
      );
      expect({ name, statuses: statuses(real) }).toEqual({ name, statuses: expected });
      for (const e of endpoints) {
        const made = await call(stack, ghost(e), headers);
        expect({ name, e: label(e), ...made }).toEqual({ name, e: label(e), ...real[label(e)] });
      }
    }
  });

  test("X-Tenant-ID is ignored: tenant A's key with B's tenant id still sees A's data and not B's", async () => {
    const withHeader = { authorization: `Token ${f.keys.owner}`, "x-tenant-id": f.b.tenantId };
    const mine = await call(stack, endpoints[0], withHeader);
    expect(mine.status).toBe(200);
    expect(mine).toEqual(await call(stack, endpoints[0], { authorization: `Token ${f.keys.owner}` }));
    const theirs = [
      { method: "GET", path: "/telemetry/otel/sessions/other-bot/g-1/transcript" },
      { method: "GET", path: "/telemetry/otel/trace/tr-g1?serviceName=other-bot" },
      { method: "GET", path: "/telemetry/metrics/trace/tr-g1" },
      { method: "POST", path: "/telemetry/otel/sessions/filtered", body: { serviceName: "other-bot" } },
    ];
    expect(statuses(await matrix(withHeader, theirs))).toEqual(every(404, theirs));
    // The same reads with B's own key work, so the 404s above are isolation, not broken paths.
    expect(statuses(await matrix({ authorization: `Token ${f.b.platformKey}` }, theirs))).toEqual(every(200, theirs));
  });
});
