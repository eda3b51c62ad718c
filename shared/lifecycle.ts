import { ConfigError, loadConfig, redactConfig, type Config } from "./config.ts";
import { createDatabase, runMigrations } from "./db/client.ts";
import { createLogger, type Logger } from "./logger.ts";
import { createTopology, ensureTopology, type NatsHandles } from "./nats/topology.ts";
import { bindTopology, connectNatsAs, isPermissionError, NatsAccessError } from "./deploy/nats.ts";
import { postgresTls } from "./deploy/postgres.ts";
import { createAppOps } from "./ops/app-ops.ts";
import { checkNatsNeeds, type AppName } from "./ops/probes.ts";

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
 * What every main.ts does first: config (or exit naming the bad variable), a logger, migrations
 * and streams when SETUP_ON_START (else they must exist: the deploy's setup step made them), the
 * Postgres pools, NATS as this app's user with what it needs checked (a wrong user or missing
 * stream stops the app with one clear line), and the app's /health, /ready and /metrics.
 */
export async function bootApp<WithNats extends boolean>(
  name: AppName,
  opts: { poolMax?: number; nats: WithNats; noAsyncTraces?: boolean; statementTimeoutMs?: (config: Config) => number },
) {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL, { app: name });
  logger.info("starting", { config: redactConfig(config) });
  // Unique per process, so /metrics can find this process's connections in pg_stat_activity.
  const applicationName = `cellar-${name}-${crypto.randomUUID().slice(0, 8)}`;
  const pg = { ssl: postgresTls(config), applicationName };
  const stop = (message: string): never => {
    logger.error("cannot start", { reason: message });
    console.error(`cellar ${name}: ${message}`);
    process.exit(1);
  };
  if (config.SETUP_ON_START) {
    await untilDone(logger, "migrations", () =>
      runMigrations(config.DATABASE_URL, pg).catch((err) => {
        // 42501 insufficient_privilege: a deployment's app role, which may not run DDL. No retry.
        if (
          (err as { code?: string })?.code !== "42501" &&
          (err as { cause?: { code?: string } })?.cause?.code !== "42501"
        )
          throw err;
        return stop(
          `the Postgres role may not apply migrations (${(err as Error).message}): set SETUP_ON_START=false and run the setup as the owner (scripts/migrate.ts)`,
        );
      }),
    );
  }
  const poolMax = config.DATABASE_POOL_MAX || opts.poolMax || 10;
  const database = createDatabase(config.DATABASE_URL, {
    max: poolMax,
    statementTimeoutMs: opts.statementTimeoutMs?.(config),
    ...pg,
  });
  let nats: NatsHandles | undefined;
  if (opts.nats) {
    try {
      const nc = await connectNatsAs(config, `cellar-${name}`, {
        waitOnFirstConnect: true,
        ...(opts.noAsyncTraces ? { noAsyncTraces: true } : {}),
      });
      nats = await untilDone(logger, "NATS topology", async () => {
        const handles = config.SETUP_ON_START
          ? await ensureTopologyAs(nc, config.NATS_USER, config.NATS_REPLICAS)
          : await bindTopology(nc, createTopology());
        await checkNatsNeeds(name, handles.jsm, handles.topology, config.NATS_USER);
        return handles;
      });
    } catch (err) {
      if (!(err instanceof NatsAccessError)) throw err;
      stop(err.message);
    }
  }
  const ops = createAppOps(name, { config, logger, sql: database.sql, nats, applicationName, poolMax });
  return { config, logger, database, nats: nats as WithNats extends true ? NatsHandles : undefined, ops };
}

async function ensureTopologyAs(
  nc: Parameters<typeof ensureTopology>[0],
  user: string,
  replicas: number,
): Promise<NatsHandles> {
  try {
    return await ensureTopology(nc, createTopology(), { replicas });
  } catch (err) {
    if (!isPermissionError(err)) throw err;
    throw new NatsAccessError(
      `NATS user "${user}" may not create streams and consumers: set SETUP_ON_START=false and run the setup as the admin user (scripts/migrate.ts)`,
    );
  }
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
      // A refused user or permission does not come back by waiting: stop with its message.
      if (err instanceof NatsAccessError || Date.now() + delay > giveUpAt) throw err;
      logger.warn(`${what} failed; retrying`, { err: err as Error, retryInMs: delay });
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
