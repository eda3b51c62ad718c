import { expect, test } from "bun:test";
import { getHealth, getOpenApi } from "./app.ts";

test("getHealth answers ok", () => {
  expect(getHealth()).toEqual({ status: "ok" });
});

test("getOpenApi documents every door, the batch door included", async () => {
  const doc = (await getOpenApi()) as { paths: Record<string, unknown> };
  expect(Object.keys(doc.paths)).toEqual(
    expect.arrayContaining(["/raw/traces", "/raw/events", "/raw/batch", "/v1/traces", "/v1/logs"]),
  );
});
