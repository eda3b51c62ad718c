import { classifyFailure } from "@cellar/shared/nats/failure";

/** How long a verdict in hand waits for Postgres or NATS to come back before it is given up. */
export const KEEP_VERDICT_MS = 120_000;

/**
 * Runs a step that follows a judge's answer (pricing it, recording it, announcing it) again while
 * it fails transiently (Postgres or NATS away: shared/nats/failure.ts), so an outage does not
 * throw away a verdict already paid for and call the judge a second time (issue 41). The message
 * stays in hand meanwhile (the consume runtime keeps it alive). Any other failure, or one that
 * outlasts `maxMs`, is thrown: the runtime's own handling (retry, dead letter) takes over.
 */
export async function whileTransient<T>(
  step: () => Promise<T>,
  opts: {
    maxMs?: number;
    sleep?: (ms: number) => Promise<void>;
    onRetry?: (err: unknown, attempt: number) => void;
  } = {},
): Promise<T> {
  const giveUpAt = Date.now() + (opts.maxMs ?? KEEP_VERDICT_MS);
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      const delay = Math.min(5_000, 250 * 2 ** attempt);
      if (classifyFailure(err) !== "transient" || Date.now() + delay > giveUpAt) throw err;
      opts.onRetry?.(err, attempt);
      await sleep(delay);
    }
  }
}
