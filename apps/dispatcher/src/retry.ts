import { deliveriesStream } from "@cellar/shared/nats/catalogue";

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/** Delay before attempts 2..9 (contract: Limits). Attempt 9 is the last. */
export const RETRY_STEPS_MS = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H] as const;
export const MAX_ATTEMPTS = RETRY_STEPS_MS.length + 1;
export const JITTER = 0.1;
/**
 * How long a retry job can live: the DELIVERIES stream's max_age (4 days), counted from the job's
 * publication (nak(delay) keeps the original message). A test checks it against the stream.
 */
export const DELIVERY_JOB_LIFETIME_MS = deliveriesStream.maxAgeMs!;
/**
 * Every attempt of a delivery falls within this long of its creation, whatever Retry-After
 * asks: eight retries each stretched to 24 h would take 8 days and outlive their job (the
 * delivery would stay pending forever). A retry that would land later is moved to the horizon
 * and is the last. Half a day of margin covers a dispatcher that was down when it came due.
 */
export const RETRY_HORIZON_MS = DELIVERY_JOB_LIFETIME_MS - 12 * H;

/** A receiver's Retry-After is honored up to this long (unscaled: it is the receiver's own clock). */
export const MAX_RETRY_AFTER_MS = 24 * H;

/**
 * Delay before `nextAttempt` (2..9): the curve's step times `scale`, jittered uniformly by
 * +/-10% so a burst of failures does not come back as a burst.
 */
export function retryDelayForAttempt(nextAttempt: number, scale = 1, random: () => number = Math.random): number {
  const step = RETRY_STEPS_MS[Math.min(Math.max(nextAttempt, 2), MAX_ATTEMPTS) - 2];
  return Math.max(1, Math.round(step * scale * (1 + (random() * 2 - 1) * JITTER)));
}

/** Retry-After as milliseconds from `now`: delta-seconds or an HTTP date; null when absent or bad. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v) * S, MAX_RETRY_AFTER_MS);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now.getTime()), MAX_RETRY_AFTER_MS);
}
