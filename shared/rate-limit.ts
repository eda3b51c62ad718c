import { HttpError } from "@cellar/shared/errors";

export interface RateLimitOptions {
  /** Tokens added per second; 0 disables limiting. */
  perSecond: number;
  /** Bucket size: how many requests may arrive at once after an idle period. */
  burst: number;
  /** Monotonic-enough clock in ms. */
  now: () => number;
  /** Idle (full) buckets are dropped once this many credentials are tracked. */
  maxTracked?: number;
  /** Who the limit is for, in the 429's message (default "this credential"). */
  subject?: string;
}

export interface RateLimiter {
  /**
   * Takes `count` tokens (default 1; the batch door takes one per item) for `id`: the RateLimit
   * headers to send, or throws 429 with Retry-After and takes nothing.
   */
  take(id: string, count?: number): Record<string, string>;
  /** True when `take(id)` would succeed now; takes nothing. */
  allows(id: string): boolean;
}

/**
 * A token bucket per credential, in this process. With N ingest instances behind a balancer a
 * credential can reach N times the rate: a deliberate trade (no shared state on the hot path),
 * documented in docs/ingestion.md.
 */
export function createRateLimiter(opts: RateLimitOptions): RateLimiter {
  if (opts.perSecond <= 0) return { take: () => ({}), allows: () => true };
  const { perSecond, burst, now } = opts;
  const maxTracked = opts.maxTracked ?? 100_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  const policy = `${burst};w=${Math.max(1, Math.ceil(burst / perSecond))}`;
  // Slow refills read better per minute (one per 6 s is "10 per minute", not 0.1666... per second).
  const rate =
    perSecond >= 1 ? `${perSecond} requests per second` : `${Number((perSecond * 60).toFixed(2))} per minute`;

  function refill(b: { tokens: number; at: number }, t: number) {
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * perSecond);
    b.at = t;
  }

  function forgetIdle(t: number) {
    for (const [id, b] of buckets) {
      refill(b, t);
      if (b.tokens >= burst) buckets.delete(id);
    }
  }

  return {
    allows(id) {
      const b = buckets.get(id);
      if (!b) return true;
      refill(b, now());
      return b.tokens >= 1;
    },
    take(id, count = 1) {
      const t = now();
      let b = buckets.get(id);
      if (!b) {
        if (buckets.size >= maxTracked) forgetIdle(t);
        b = { tokens: burst, at: t };
        buckets.set(id, b);
      } else {
        refill(b, t);
      }
      const allowed = b.tokens >= count;
      if (allowed) b.tokens -= count;
      const headers: Record<string, string> = {
        "ratelimit-limit": String(burst),
        "ratelimit-remaining": String(Math.floor(b.tokens)),
        // Seconds until the bucket is full again.
        "ratelimit-reset": String(Math.ceil((burst - b.tokens) / perSecond)),
        "ratelimit-policy": policy,
      };
      if (allowed) return headers;
      const retryAfter = Math.max(1, Math.ceil((count - b.tokens) / perSecond));
      throw new HttpError(
        429,
        `rate limit exceeded for ${opts.subject ?? "this credential"}: ${rate}, burst ${burst}`,
        { ...headers, "retry-after": String(retryAfter) },
      );
    },
  };
}
