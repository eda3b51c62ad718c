import { createRateLimiter, type RateLimiter } from "@cellar/shared/rate-limit";

/**
 * Documented in docs/platform-api.md ("Limits"). Per instance, like ingest's limit: with N
 * platform instances a key can reach N times these rates.
 */
export const PLATFORM_LIMITS = {
  /** Every authenticated request, per platform key. */
  perKey: { perSecond: 50, burst: 200 },
  /** Webhook test sends and manual retries, per tenant: each makes the dispatcher POST. */
  sendsPerTenant: { perSecond: 0.2, burst: 10 },
} as const;

export interface PlatformLimiter {
  perKey: RateLimiter;
  sends: RateLimiter;
}

export function createPlatformLimiter(
  limits: {
    perKey: { perSecond: number; burst: number };
    sendsPerTenant: { perSecond: number; burst: number };
  } = PLATFORM_LIMITS,
  now: () => number = Date.now,
): PlatformLimiter {
  return {
    perKey: createRateLimiter({ ...limits.perKey, now, subject: "this platform key" }),
    sends: createRateLimiter({
      ...limits.sendsPerTenant,
      now,
      subject: "webhook test sends and retries of this tenant",
    }),
  };
}
