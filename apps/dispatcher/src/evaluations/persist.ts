import { classifyFailure } from "@cellar/shared/nats/failure";

/** How long a verdict in hand waits for Postgres or NATS to come back before it is given up. */
export const KEEP_VERDICT_MS = 120_000;
/**
 * One try of a step is abandoned after this long and tried again: a query sent on a connection
 * Postgres dropped while restarting can wait for ever, and held the verdict (and its message)
 * with it (seen once in four runs of test/faults-evaluations.test.ts at load 30).
 */
export const STEP_TIMEOUT_MS = 10_000;

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
    stepTimeoutMs?: number;
    sleep?: (ms: number) => Promise<void>;
    onRetry?: (err: unknown, attempt: number) => void;
  } = {},
): Promise<T> {
  const giveUpAt = Date.now() + (opts.maxMs ?? KEEP_VERDICT_MS);
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 0; ; attempt++) {
    try {
      return await bounded(step(), opts.stepTimeoutMs ?? STEP_TIMEOUT_MS);
    } catch (err) {
      const delay = Math.min(5_000, 250 * 2 ** attempt);
      if (classifyFailure(err) !== "transient" || Date.now() + delay > giveUpAt) throw err;
      opts.onRetry?.(err, attempt);
      await sleep(delay);
    }
  }
}

/** `p`, or a transient ETIMEDOUT after `ms` (the step itself is left to finish or fail alone). */
function bounded<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: "ETIMEDOUT" })), ms);
  });
  p.catch(() => {}); // an abandoned try that fails later is not an unhandled rejection
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
