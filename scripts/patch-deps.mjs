// postinstall (plain Node, runs under `npm ci`): small fixes to dependencies that upstream has
// not released yet. Idempotent; fails the install if a target changed shape, so a dependency
// update cannot silently drop a fix.
//
// postgres@3.4.x: `nextWrite` can run after `closed()` has set `socket = null` (a write scheduled
// with setImmediate, or reached from the data handler) and throws an uncatchable TypeError that
// kills the process (porsager/postgres#1066, #1154, #1208; fix proposed in #1209). The chaos run
// (bench/chaos.ts) hit it on a Postgres restart: a processor died. The guard settles pending
// queries with CONNECTION_CLOSED, as #1209 does, instead of dropping the write.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const MARK = "cellar patch: porsager/postgres#1208";
const BEFORE = "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n";
const AFTER = `  function nextWrite(fn) {
    if (!socket) { // ${MARK}
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)
`;

let patched = 0;
for (const variant of ["src", "cjs/src", "cf/src"]) {
  const file = join(root, "node_modules/postgres", variant, "connection.js");
  if (!existsSync(file)) continue;
  const text = readFileSync(file, "utf8");
  if (text.includes(MARK)) continue;
  if (!text.includes(BEFORE)) {
    console.error(
      `patch-deps: ${file} changed shape; check whether postgres fixed nextWrite upstream and update scripts/patch-deps.mjs`,
    );
    process.exit(1);
  }
  writeFileSync(file, text.replace(BEFORE, AFTER));
  patched++;
}
if (patched) console.log(`patch-deps: guarded postgres nextWrite in ${patched} file(s)`);
