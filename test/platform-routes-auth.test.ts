import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestStack, type TestStack } from "./helpers/stack";

/**
 * Every route the platform mounts under /api/v1 is authenticated, whichever group of its resource
 * added it (http/resource.ts: a resource's routes are added in groups by subject on one
 * instance): without a key each answers the contract's bare 401, before it reads a body or a
 * parameter. The OpenAPI document is the one public route.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
});
afterAll(() => stack.stop());

const PUBLIC = new Set(["GET /api/v1/openapi.json"]);

test("every /api/v1 route but the OpenAPI document answers 401 without a key", async () => {
  const routes = (stack.platform.routes as { method: string; path: string }[]).filter(
    (r) => r.path.startsWith("/api/v1/") && !PUBLIC.has(`${r.method} ${r.path}`),
  );
  // The resources whose routes are added in groups are all there, each with every group.
  for (const path of [
    "/api/v1/telemetry/otel/sessions/:serviceName/:sessionId/transcript",
    "/api/v1/telemetry/otel/sessions/:serviceName/:sessionId/tldr",
    "/api/v1/telemetry/otel/sessions/filtered",
    "/api/v1/webhooks/:id",
    "/api/v1/webhooks/:id/enable",
    "/api/v1/organization/projects",
    "/api/v1/organization/members",
    "/api/v1/organization/keys",
    "/api/v1/evaluators/:id",
    "/api/v1/evaluators/:id/runs",
  ])
    expect(routes.some((r) => r.path === path)).toBe(true);
  const answers: Record<string, unknown> = {};
  for (const r of routes) {
    const url = `http://platform.test${r.path.replace(/:[A-Za-z0-9_]+/g, "x-1")}`;
    const withBody = r.method !== "GET" && r.method !== "DELETE";
    const res = await stack.platform.handle(
      new Request(url, {
        method: r.method,
        ...(withBody && { headers: { "content-type": "application/json" }, body: "{}" }),
      }),
    );
    answers[`${r.method} ${r.path}`] = { status: res.status, body: await res.json().catch(() => null) };
  }
  const unauthorized = { status: 401, body: { error: "unauthorized" } };
  expect(answers).toEqual(Object.fromEntries(Object.keys(answers).map((k) => [k, unauthorized])));
  expect(Object.keys(answers).length).toBeGreaterThan(60);
}, 60_000);
