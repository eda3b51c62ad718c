import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// scripts/patch-deps.mjs runs at install: without the guard a Postgres restart can kill an app
// (porsager/postgres#1208, hit by the chaos run). The chaos test exercises the behaviour; this
// checks the driver Bun actually loads carries it.
test("the postgres driver loaded by Bun has the nextWrite guard from scripts/patch-deps.mjs", () => {
  const pkg = createRequire(import.meta.url).resolve("postgres/package.json");
  for (const variant of ["src", "cjs/src"]) {
    expect(readFileSync(join(dirname(pkg), variant, "connection.js"), "utf8")).toContain(
      "cellar patch: porsager/postgres#1208",
    );
  }
});

// A backend terminated while a new connection fetched its array types replayed its 57P01 onto
// the next connection and escaped as an unhandled rejection (porsager/postgres#1223, #1192):
// test/maturation-connection-closed.test.ts exercises it; this checks the loaded driver has it.
test("the postgres driver loaded by Bun clears a closed connection's stale error and handles its array-types fetch", () => {
  const pkg = createRequire(import.meta.url).resolve("postgres/package.json");
  for (const variant of ["src", "cjs/src"]) {
    const text = readFileSync(join(dirname(pkg), variant, "connection.js"), "utf8");
    expect(text).toContain("cellar patch: porsager/postgres#1223");
    expect(text).toContain("cellar patch: porsager/postgres#1192");
  }
});

// The image installs with --ignore-scripts (no root postinstall): it must run the patches itself,
// after that install and in the stage whose node_modules the apps use.
test("the Dockerfile applies scripts/patch-deps.mjs after its --ignore-scripts install", () => {
  const docker = readFileSync(join(import.meta.dir, "../Dockerfile"), "utf8");
  const install = docker.indexOf("bun install --production --ignore-scripts");
  expect(install).toBeGreaterThan(-1);
  expect(docker.indexOf("bun scripts/patch-deps.mjs", install)).toBeGreaterThan(install);
  expect(docker.indexOf("COPY scripts/patch-deps.mjs")).toBeLessThan(install);
  expect(docker.indexOf("COPY --from=deps /app/node_modules")).toBeGreaterThan(install);
});
