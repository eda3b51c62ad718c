// postinstall (plain Node, runs under `npm ci`): small fixes to dependencies that upstream has
// not released yet. Idempotent; fails the install if a target changed shape, so a dependency
// update cannot silently drop a fix.
//
// postgres@3.4.x: `nextWrite` can run after `closed()` has set `socket = null` (a write scheduled
// with setImmediate, or reached from the data handler) and throws an uncatchable TypeError that
// kills the process (porsager/postgres#1066, #1154, #1208; fix proposed in #1209). The chaos run
// (bench/chaos.ts) hit it on a Postgres restart: a processor died. The guard settles pending
// queries with CONNECTION_CLOSED, as #1209 does, instead of dropping the write.
//
// postgres@3.4.x: a backend terminated (57P01) while a new connection fetches its array types
// (`fetch_types`, the first statement on every connection) left the connection's `query` and
// `errorResponse` set across the reconnect: the next connection's first ReadyForQuery rejected
// that stale array-types query with the old 57P01, and `fetchArrayTypes()`'s promise, which
// ReadyForQuery drops, surfaced it as an unhandled rejection (porsager/postgres#1223, #1192).
// It failed test/maturation-connection-closed.test.ts about one run in three (the test kills the
// processor's backends every 150 ms, often one that just reconnected). A close now settles the
// in-flight query with CONNECTION_CLOSED and clears that state, and the array-types fetch has a
// handler (its failure still reaches the waiting query, through ReadyForQuery as before).
//
// @nats-io/nats-core@3.x: a connection the server (or a proxy, or a node going down) closes after
// the client's CONNECT and before the PONG that ends the handshake never failed that handshake:
// the dial waited for its whole connection timeout (20 s by default) before the reconnect loop
// tried again, so a node that accepts and then drops kept every app down for 20 s per attempt
// (seen by flood6, test/nats-refused-after-connect.test.ts: no attempt in 4 s). The transport's
// close now rejects the handshake's PONG (a no-op once it was answered), and the loop goes on after
// reconnectTimeWait as it does for a refused connection.
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

const PATCHES = [
  { mark: MARK, before: BEFORE, after: AFTER, what: "nextWrite" },
  {
    mark: "cellar patch: porsager/postgres#1223",
    before:
      "    if (initial)\n      return reconnect()\n\n    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
    after: `    if (initial) { // cellar patch: porsager/postgres#1223
      query && queryError(query, Errors.connection('CONNECTION_CLOSED', options, socket))
      query = results = errorResponse = null
      return reconnect()
    }

    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
    query = results = errorResponse = null
`,
    what: "a closed connection's stale query and error",
  },
  {
    mark: "cellar patch: porsager/postgres#1192",
    before: "        return fetchArrayTypes()\n",
    after: "        return fetchArrayTypes().catch(() => {}) // cellar patch: porsager/postgres#1192\n",
    what: "the dropped array-types promise",
  },
];

let patched = 0;
for (const variant of ["src", "cjs/src", "cf/src"]) {
  const file = join(root, "node_modules/postgres", variant, "connection.js");
  if (!existsSync(file)) continue;
  let text = readFileSync(file, "utf8");
  for (const p of PATCHES) {
    if (text.includes(p.mark)) continue;
    if (!text.includes(p.before)) {
      console.error(
        `patch-deps: ${file} changed shape (${p.what}); check whether postgres fixed it upstream and update scripts/patch-deps.mjs`,
      );
      process.exit(1);
    }
    text = text.replace(p.before, p.after);
    patched++;
  }
  writeFileSync(file, text);
}
if (patched) console.log(`patch-deps: applied ${patched} postgres connection.js patch(es)`);

const NATS_MARK = "cellar patch: nats-core handshake close";
const natsProtocol = join(root, "node_modules/@nats-io/nats-core/lib/protocol.js");
if (existsSync(natsProtocol)) {
  const text = readFileSync(natsProtocol, "utf8");
  const before =
    "        this.transport.closed()\n            .then(async (_err) => {\n            this.connected = false;\n";
  const after = `        this.transport.closed()
            .then(async (_err) => {
            // ${NATS_MARK}: closed before the PONG, this dial fails now, not at its timeout
            pong.reject(_err || new errors_1.errors.ConnectionError("connection closed during the handshake"));
            this.connected = false;
`;
  if (!text.includes(NATS_MARK)) {
    if (!text.includes(before)) {
      console.error(
        `patch-deps: ${natsProtocol} changed shape (the handshake's close); check whether nats.js fixed it upstream and update scripts/patch-deps.mjs`,
      );
      process.exit(1);
    }
    writeFileSync(natsProtocol, text.replace(before, after));
    console.log("patch-deps: applied the nats-core protocol.js patch");
  }
}
