/**
 * `npm test`: starts a nats-server and an embedded Postgres of its own (unless NATS_URL /
 * DATABASE_URL point at running ones), runs `bun test`, stops them, and prints one
 * `N passed, M failed` line taken from bun's summary.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, type RunningNats } from "./infra/nats-server";
import { startEmbeddedPostgres, type RunningPostgres } from "./infra/postgres";
import { ensureChromium } from "./infra/chromium";

const scratch = mkdtempSync(join(tmpdir(), "cellar-test-"));
let nats: RunningNats | undefined;
let pg: RunningPostgres | undefined;
const env: Record<string, string> = { ...(process.env as Record<string, string>) };

async function main(): Promise<number> {
  ensureChromium(); // the dashboard's browser tests drive Debian's chromium (apt-get when missing)
  if (!env.NATS_URL) {
    nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
    env.NATS_URL = nats.url;
  }
  if (!env.DATABASE_URL) {
    pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
    env.DATABASE_URL = pg.url;
  }
  env.CELLAR_TEST_INFRA = "1";
  // An ingest app a test starts listens for OTLP/gRPC on any free port, not on a shared 4317.
  env.INGEST_GRPC_PORT ??= "0";
  const child = spawn(process.execPath, ["test", "--timeout", "60000", ...process.argv.slice(2)], {
    env,
    stdio: ["inherit", "pipe", "pipe"],
  });
  let tail = "";
  const keep = (chunk: Buffer, out: NodeJS.WriteStream) => {
    out.write(chunk);
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout.on("data", (c) => keep(c, process.stdout));
  child.stderr.on("data", (c) => keep(c, process.stderr));
  const code: number = await new Promise((res) => child.on("exit", (c, sig) => res(c ?? (sig ? 1 : 0))));
  const passed = Number(tail.match(/^\s*(\d+) pass$/m)?.[1] ?? 0);
  const failed = Number(tail.match(/^\s*(\d+) fail$/m)?.[1] ?? (code === 0 ? 0 : 1));
  console.log(`${passed} passed, ${failed} failed`);
  return code === 0 && failed === 0 && passed > 0 ? 0 : 1;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  console.error(err);
} finally {
  await Promise.allSettled([nats?.stop(), pg?.stop()]);
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(exitCode);
