/**
 * The Cellar apps as separate processes (`main.ts`, as containers run them) for the SDK's proof
 * tests, on a fresh database and the test run's NATS; an app can be killed and started again on
 * the same port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { freePort, waitForPort } from "../../scripts/infra/ports";
import { createTestDatabase } from "./infra";

const ROOT = join(import.meta.dir, "../..");
type App = "ingest" | "platform" | "processor";

export async function startSdkApps() {
  const testDb = await createTestDatabase();
  const database: Database = createDatabase(testDb.url, { max: 3 });
  const [ingestPort, platformPort] = [await freePort(), await freePort()];
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: testDb.url,
    NATS_URL: process.env.NATS_URL!,
    INGEST_PORT: String(ingestPort),
    PLATFORM_PORT: String(platformPort),
    INGEST_PUBLIC_URL: `http://127.0.0.1:${ingestPort}`,
    PROCESSOR_PORT: "0",
    MATURATION_WINDOW_SECONDS: "1",
    SECRET_ENCRYPTION_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
    LOG_LEVEL: "warn",
  };
  const children = new Map<string, ChildProcess>();
  const output: string[] = [];
  const start = async (app: App, extra: Record<string, string> = {}, name: string = app) => {
    const child = spawn(process.execPath, ["run", join(ROOT, `apps/${app}/src/main.ts`)], {
      env: { ...env, ...extra },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (c) => output.push(`[${name}] ${c}`));
    child.stderr!.on("data", (c) => output.push(`[${name}] ${c}`));
    children.set(name, child);
    const port = extra.INGEST_PORT ?? extra.PLATFORM_PORT ?? (app === "ingest" ? ingestPort : platformPort);
    if (app !== "processor") await waitForPort(Number(port), 30_000);
  };
  const kill = async (name: string) => {
    const child = children.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  };
  await Promise.all([start("ingest"), start("platform"), start("processor")]);
  return {
    database,
    ingestUrl: `http://127.0.0.1:${ingestPort}`,
    platformUrl: `http://127.0.0.1:${platformPort}/api/v1`,
    start,
    kill,
    output: () => output.join(""),
    async stop() {
      await Promise.all([...children.keys()].map(kill));
      await database.close();
      await testDb.drop();
    },
  };
}
