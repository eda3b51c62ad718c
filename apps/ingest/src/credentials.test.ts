import { describe, expect, test } from "bun:test";
import { methodNotAllowed, preflightResponse } from "./credentials.ts";

describe("preflightResponse", () => {
  test("a browser preflight is allowed for its origin (the DSN's origin rule applies to the POST)", () => {
    const res = preflightResponse(
      new Request("http://ingest.test/raw/batch", { method: "OPTIONS", headers: { origin: "https://app.test" } }),
    );
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.test");
    expect(res.headers.get("access-control-allow-headers")).toContain("authorization");
    expect(res.headers.get("vary")).toBe("Origin");
  });

  test("without an Origin it only says what is allowed", () => {
    const res = preflightResponse(new Request("http://ingest.test/raw/traces", { method: "OPTIONS" }));
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("POST, OPTIONS");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

test("methodNotAllowed is a 405 naming the method and the path, with Allow", () => {
  const err = methodNotAllowed("GET", "/raw/batch");
  expect(err.status).toBe(405);
  expect(err.message).toBe("method GET is not allowed on /raw/batch; use POST");
  expect(err.headers).toEqual({ allow: "POST, OPTIONS" });
});
