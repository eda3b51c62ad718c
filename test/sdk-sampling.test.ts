// Both SDKs sample the same sessions (issue 37): the Python SDK's hash over every id of the
// property test's schemes equals the TypeScript SDK's, and the Python SDK passes the shared vectors.
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { sampleHash } from "../sdks/typescript/src/sampling.ts";
import { samplingSchemes } from "../sdks/typescript/test/sampling-schemes.ts";
import { ROOT } from "./helpers/compose";

const SDK = join(ROOT, "sdks/python");

test("the Python SDK's sampling hash equals the TypeScript SDK's on 90,000 ids of every scheme", () => {
  const ids = Object.values(samplingSchemes(10_000)).flat();
  const script =
    "import json, sys\nfrom cellar_sdk.sampling import sample_hash\n" +
    "print(json.dumps([sample_hash(i) for i in json.load(sys.stdin)]))";
  const run = spawnSync("python3", ["-c", script], {
    input: JSON.stringify(ids),
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: join(SDK, "src") },
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(run.stderr).toBe("");
  const python: number[] = JSON.parse(run.stdout);
  const mismatches = ids.filter((id, i) => python[i] !== sampleHash(id));
  expect(mismatches).toEqual([]);
  expect(python.length).toBe(ids.length);
});

test("the Python SDK passes the shared sampling vectors", () => {
  const run = spawnSync("python3", ["-m", "unittest", "tests.test_sampling"], {
    cwd: SDK,
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: join(SDK, "src") },
  });
  expect(run.stderr).toContain("OK");
  expect(run.status).toBe(0);
});
