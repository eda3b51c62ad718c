import type { Logger } from "./logger";

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
export async function loadConfigOrExit() {
  const { loadConfig, ConfigError } = await import("./config");
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
