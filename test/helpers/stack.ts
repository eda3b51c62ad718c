import { createDatabase, type Database } from "@cellar/shared/db/client";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { createLogger, type LogLevel } from "@cellar/shared/logger";
import { connectNats, createTopology, ensureTopology, type NatsHandles } from "@cellar/shared/nats/topology";
import { createIngestApp } from "../../apps/ingest/src/app";
import { createPlatformApp } from "../../apps/platform/src/app";
import { createProcessor, type Processor, type ProcessorDeps } from "../../apps/processor/src/processor";
import { createDispatcher, type Dispatcher, type DispatcherDeps } from "../../apps/dispatcher/src/dispatcher";
import type { WebhookOptions } from "../../apps/platform/src/webhooks/routes";
import { SecretBox } from "@cellar/shared/crypto";
import { countBeforeDelete } from "@cellar/shared/ledger/dead-letters";
import { createTestDatabase } from "./infra";

export { waitFor } from "./wait";

/** A fixed 32-byte key for sealing webhook secrets in tests. */
export const TEST_SECRET_KEY = btoa("cellar-test-secret-key-32-bytes!");

export interface TestStack {
  database: Database;
  /** The URL of this file's database (for the apps and CLIs a test runs as processes). */
  databaseUrl: string;
  nats: NatsHandles;
  ingest: ReturnType<typeof createIngestApp>;
  platform: ReturnType<typeof createPlatformApp>;
  processor?: Processor;
  windowSeconds: number;
  /** Sends a request to the ingest app in-process. */
  ingestRequest(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** GET (or other) against the platform app in-process. */
  platformRequest(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  startProcessor(overrides?: Partial<ProcessorDeps>): Promise<Processor>;
  /** Starts a dispatcher on this stack (secretBox shared with the platform's). */
  startDispatcher(overrides?: Partial<DispatcherDeps>): Promise<Dispatcher>;
  secretBox: SecretBox;
  stop(): Promise<void>;
}

/**
 * A fresh database and NATS namespace for one test file, with the apps built in-process from
 * the same factories main.ts uses. Real nats-server and Postgres underneath.
 */
export async function createTestStack(
  opts: {
    windowSeconds?: number;
    logLevel?: LogLevel;
    startProcessor?: boolean;
    webhooks?: WebhookOptions;
    postgresUrl?: string;
  } = {},
): Promise<TestStack> {
  const windowSeconds = opts.windowSeconds ?? 1;
  const logger = createLogger(opts.logLevel ?? ((process.env.TEST_LOG_LEVEL as LogLevel) || "silent"));
  const testDb = await createTestDatabase(opts.postgresUrl);
  const database = createDatabase(testDb.url, { max: 10 });
  const namespace = `t${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}`;
  const nc = await connectNats(process.env.NATS_URL!, `test-${namespace}`);
  const topology = createTopology(namespace);
  const nats = await ensureTopology(nc, topology);
  const keys = new KeyResolver(database.db, { ttlMs: 200 });
  const ingest = createIngestApp({ js: nats.js, topology, keys, logger, maxBodyBytes: 4 * 1024 * 1024 });
  const secretBox = new SecretBox(TEST_SECRET_KEY);
  const platform = createPlatformApp({
    db: database.db,
    sql: database.sql,
    keys,
    logger,
    windowSeconds,
    webhooks: { secretBox, js: nats.js, topology, ...opts.webhooks },
    deadLetters: { js: nats.js, topology, count: countBeforeDelete(database.sql, topology) },
  });
  const processors: Processor[] = [];
  const dispatchers: Dispatcher[] = [];

  const stack: TestStack = {
    database,
    databaseUrl: testDb.url,
    nats,
    ingest,
    platform,
    windowSeconds,
    secretBox,
    ingestRequest: (path, body, headers = {}) =>
      ingest.handle(
        new Request(`http://ingest.test${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
      ),
    platformRequest: (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (init.token) headers.set("authorization", `Token ${init.token}`);
      if (init.body && !headers.has("content-type")) headers.set("content-type", "application/json");
      return platform.handle(new Request(`http://platform.test/api/v1${path}`, { ...init, headers }));
    },
    async startProcessor(overrides = {}) {
      const p = createProcessor({
        sql: database.sql,
        js: nats.js,
        topology,
        logger,
        windowSeconds,
        sweepIntervalMs: 60_000,
        // This stack's ingest keeps no ledger (its reconciliation would find nothing accepted).
        reconcile: false,
        ...overrides,
      });
      await p.start();
      processors.push(p);
      stack.processor = p;
      return p;
    },
    async startDispatcher(overrides = {}) {
      const d = createDispatcher({ sql: database.sql, js: nats.js, topology, logger, secretBox, ...overrides });
      await d.start();
      dispatchers.push(d);
      return d;
    },
    async stop() {
      // Bounded step by step, and every failure printed: a stop that hangs (a pool waiting on a
      // closed connection, a drain that never ends) must not hide the error that ended the test.
      await stopStep("processors", Promise.all(processors.map((p) => p.stop())), 20_000);
      await stopStep("dispatchers", Promise.all(dispatchers.map((d) => d.stop())), 20_000);
      for (const name of [
        topology.ingestStream,
        topology.maturedStream,
        topology.deliveriesStream,
        topology.deadLetterStream,
        `KV_${topology.activityBucket}`,
      ]) {
        await stopStep(`delete stream ${name}`, nats.jsm.streams.delete(name), 10_000, { quiet: true });
      }
      await stopStep("nats drain", nc.drain(), 10_000);
      if (!nc.isClosed()) await stopStep("nats close", nc.close(), 5_000);
      await stopStep("database pools", database.close(), 10_000);
      await stopStep("drop test database", testDb.drop(), 20_000);
    },
  };
  if (opts.startProcessor !== false) await stack.startProcessor();
  return stack;
}

/**
 * A platform app on the stack's database, built apart from `stack.platform` (its own KeyResolver
 * with a 200 ms cache, a silent logger, a 1 s window) with `deps` on top: for a test that needs
 * the platform built otherwise (another limiter, no NATS, dead letters without the ledger's count).
 */
export function platformOnStack(stack: TestStack, deps: Partial<Parameters<typeof createPlatformApp>[0]> = {}) {
  return createPlatformApp({
    db: stack.database.db,
    sql: stack.database.sql,
    keys: new KeyResolver(stack.database.db, { ttlMs: 200 }),
    logger: createLogger("silent"),
    windowSeconds: 1,
    ...deps,
  });
}

/**
 * One step of TestStack.stop: waits at most `ms` for it, prints (never swallows) its failure or
 * its timeout on stderr, and never throws, so the remaining steps still run. `quiet`: a failure
 * is expected (a stream the test already removed) and not printed; a timeout still is.
 */
export async function stopStep(what: string, step: Promise<unknown>, ms: number, opts: { quiet?: boolean } = {}) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((r) => {
    timer = setTimeout(() => r("timeout"), ms);
  });
  try {
    const outcome = await Promise.race([step.then(() => "ok" as const), timedOut]);
    if (outcome === "timeout") console.error(`test stack stop: ${what} did not finish within ${ms} ms; going on`);
  } catch (err) {
    if (!opts.quiet) console.error(`test stack stop: ${what} failed:`, err);
  } finally {
    clearTimeout(timer);
  }
}
