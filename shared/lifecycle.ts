import { ConfigError, loadConfig, redactConfig, type Config } from "./config";
import { createDatabase, runMigrations } from "./db/client";
import { createLogger, type Logger } from "./logger";
import { connectNats, createTopology, ensureTopology, type NatsHandles } from "./nats/topology";

/**
 * Runs the shutdown steps in order on SIGTERM/SIGINT (stop HTTP, stop consumers, drain NATS,
 * close Postgres), logging each, then exits. A second signal exits at once.
 */
export function onShutdown(logger: Logger, steps: Array<[name: string, run: () => Promise<unknown> | unknown]>): void {
  let stopping = false;
  const handler = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info("shutting down", { signal });
    for (const [name, run] of steps) {
      try {
        await run();
        logger.info("stopped", { step: name });
      } catch (err) {
        logger.error("shutdown step failed", { step: name, err: err as Error });
      }
    }
    process.exit(0);
  };
  process.on("SIGTERM", () => void handler("SIGTERM"));
  process.on("SIGINT", () => void handler("SIGINT"));
}

/** Loads config or exits with the message naming the bad variable. */
function loadConfigOrExit() {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`cellar: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * What every main.ts does first: config (or exit naming the bad variable), a logger, migrations,
 * the Postgres pools and, when asked, NATS with the topology ensured.
 */
export async function bootApp<WithNats extends boolean>(name: string, opts: { poolMax?: number; nats: WithNats; noAsyncTraces?: boolean; statementTimeoutMs?: (config: Config) => number }) {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL, { app: name });
  logger.info("starting", { config: redactConfig(config) });
  await untilDone(logger, "migrations", () => runMigrations(config.DATABASE_URL));
  const database = createDatabase(config.DATABASE_URL, { max: opts.poolMax ?? 10, statementTimeoutMs: opts.statementTimeoutMs?.(config) });
  let nats: NatsHandles | undefined;
  if (opts.nats) {
    const nc = await connectNats(config.NATS_URL, `cellar-${name}`, { waitOnFirstConnect: true, ...(opts.noAsyncTraces ? { noAsyncTraces: true } : {}) });
    nats = await untilDone(logger, "NATS topology", () => ensureTopology(nc, createTopology(), { replicas: config.NATS_REPLICAS }));
  }
  return { config, logger, database, nats: nats as WithNats extends true ? NatsHandles : undefined };
}

/** Start-up gives a dependency this long to come back before the process exits (and is restarted). */
const START_PATIENCE_MS = 5 * 60_000;

/**
 * Retries a start-up step while a dependency is away (a NATS cluster electing leaders, Postgres
 * restarting) with capped backoff, instead of exiting on the first timeout.
 */
async function untilDone<T>(logger: Logger, what: string, step: () => Promise<T>): Promise<T> {
  const giveUpAt = Date.now() + START_PATIENCE_MS;
  for (let delay = 500; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await step();
    } catch (err) {
      if (Date.now() + delay > giveUpAt) throw err;
      logger.warn(`${what} failed; retrying`, { err: err as Error, retryInMs: delay });
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
