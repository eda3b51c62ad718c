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
