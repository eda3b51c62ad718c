import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

test("handlers served through ops.serve see the client address (the pre-auth limits key on it)", () => {
  const r = spawnSync(process.execPath, ["run", join(import.meta.dir, "../../test/fixtures/serve-client-ip.ts")], {
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(r.stderr).toBe("");
  expect(JSON.parse(r.stdout.trim())).toEqual({ ip: "127.0.0.1" });
});
