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
  /**
   * Admission before a many-item request's body is read (docs/ingestion.md, "Rate limits"): takes
   * this credential's estimate for `door` (the most items it sent there in one request over the
   * last ESTIMATE_WINDOW_MS, 1 at first, at most the burst), or throws 429 with Retry-After and
   * takes nothing. Nothing of the body is read, inflated or parsed for a refusal. The request's
   * real count then settles the reservation (`settle`).
   */
  reserve(id: string, door: string): RateReservation;
}

/** Tokens a request holds between its admission and its real item count (RateLimiter.reserve). */
export interface RateReservation {
  /** The RateLimit headers after the reservation. */
  headers: Record<string, string>;
  /**
   * Settles with the request's real item count (at least 1 is charged: every request read costs a
   * token): refunds what was reserved beyond it, or takes the difference, letting the bucket owe
   * up to one burst (the following requests then wait at the door until it is repaid). Throws
   * 413 when `count` exceeds the burst (charged all the same: it was read) and 429 when the
   * difference would put the bucket more than a burst in debt (the reservation is kept).
   * `noun` names the items in the 413 ("items", "spans", "log records").
   */
  settle(count: number, noun?: string): Record<string, string>;
  /**
   * Call after the body is read, before it is inflated and again before it is parsed: when the
   * door's estimate grew since this reservation (another request of the credential was counted
   * larger meanwhile), takes the difference, or rejects with 429 (the reservation is kept,
   * settled). So a herd of concurrent requests admitted on a small estimate (a client's first
   * requests, or a change to larger ones) parses one body, not every one: the others are refused
   * once the first is counted (issue 41). While nothing of the door was counted lately, the first
   * request to confirm is the door's probe and the others wait here for it to be settled (at most
   * PROBE_WAIT_MS), so they are not even inflated. A no-op once settled.
   */
  confirm(): Promise<void>;
  /**
   * The body was read but could not be counted (too large, not gzip, malformed): nothing more is
   * taken, but the estimate becomes the burst for the window, so the credential's next request
   * waits for a full bucket. Repeating unreadable bodies thus costs a burst each. No-op once settled.
   */
  settleUncounted(): void;
}

/** An estimate (the largest request seen) is forgotten this long after it was last reached. */
export const ESTIMATE_WINDOW_MS = 10_000;

/** The most a request waits at `confirm` for its door's probe to be counted (RateReservation). */
export const PROBE_WAIT_MS = 5_000;

/**
 * A token bucket per credential, in this process. With N ingest instances behind a balancer a
 * credential can reach N times the rate: a deliberate trade (no shared state on the hot path),
 * documented in docs/ingestion.md.
 */
export function createRateLimiter(opts: RateLimitOptions): RateLimiter {
  if (opts.perSecond <= 0)
    return {
      take: () => ({}),
      allows: () => true,
      reserve: () => ({ headers: {}, settle: () => ({}), settleUncounted: () => {}, confirm: async () => {} }),
    };
  const { perSecond, burst, now } = opts;
  const maxTracked = opts.maxTracked ?? 100_000;
  /** `tokens` below 0: the credential owes them (a request larger than its reservation). */
  const buckets = new Map<string, Bucket>();
  const policy = `${burst};w=${Math.max(1, Math.ceil(burst / perSecond))}`;
  // Slow refills read better per minute (one per 6 s is "10 per minute", not 0.1666... per second).
  const rate =
    perSecond >= 1 ? `${perSecond} requests per second` : `${Number((perSecond * 60).toFixed(2))} per minute`;

  function refill(b: Bucket, t: number) {
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * perSecond);
    b.at = t;
  }

  function forgetIdle(t: number) {
    for (const [id, b] of buckets) {
      refill(b, t);
      if (b.tokens >= burst) buckets.delete(id);
    }
  }

  function bucketOf(id: string, t: number): Bucket {
    let b = buckets.get(id);
    if (!b) {
      if (buckets.size >= maxTracked) forgetIdle(t);
      b = { tokens: burst, at: t };
      buckets.set(id, b);
    } else {
      refill(b, t);
    }
    return b;
  }

  function headersOf(b: Bucket): Record<string, string> {
    return {
      "ratelimit-limit": String(burst),
      "ratelimit-remaining": String(Math.max(0, Math.floor(b.tokens))),
      // Seconds until the bucket is full again.
      "ratelimit-reset": String(Math.ceil((burst - b.tokens) / perSecond)),
      "ratelimit-policy": policy,
    };
  }

  /** 429 with Retry-After: the seconds until `count` tokens are in the bucket. */
  function refusal(b: Bucket, count: number): HttpError {
    const retryAfter = Math.max(1, Math.ceil((count - b.tokens) / perSecond));
    return new HttpError(429, `rate limit exceeded for ${opts.subject ?? "this credential"}: ${rate}, burst ${burst}`, {
      ...headersOf(b),
      "retry-after": String(retryAfter),
    });
  }

  function knownEstimate(b: Bucket, door: string, t: number): number | undefined {
    const e = b.estimates?.get(door);
    return e && t - e.at < ESTIMATE_WINDOW_MS ? e.count : undefined;
  }

  function estimateOf(b: Bucket, door: string, t: number): number {
    return knownEstimate(b, door, t) ?? 1;
  }

  function remember(b: Bucket, door: string, count: number, t: number) {
    const capped = Math.max(1, Math.min(burst, count));
    const e = b.estimates?.get(door);
    if (e && t - e.at < ESTIMATE_WINDOW_MS && e.count > capped) return;
    b.estimates ??= new Map();
    b.estimates.set(door, { count: capped, at: t });
  }

  return {
    allows(id) {
      const b = buckets.get(id);
      if (!b) return true;
      refill(b, now());
      return b.tokens >= 1;
    },
    take(id, count = 1) {
      const b = bucketOf(id, now());
      if (b.tokens < count) throw refusal(b, count);
      b.tokens -= count;
      return headersOf(b);
    },
    reserve(id, door) {
      const b = bucketOf(id, now());
      let reserved = estimateOf(b, door, b.at);
      if (b.tokens < reserved) throw refusal(b, reserved);
      b.tokens -= reserved;
      let settled = false;
      /** Set while this reservation is its door's probe: ends it (the waiters go on). */
      let endProbe: (() => void) | undefined;
      const settleNow = () => {
        settled = true;
        endProbe?.();
        endProbe = undefined;
      };
      return {
        headers: headersOf(b),
        async confirm() {
          if (!settled && !endProbe && !knownEstimate(b, door, now())) {
            const running = b.probes?.get(door);
            // A probe older than PROBE_WAIT_MS is taken as gone (its request never settled).
            if (running && now() - running.at < PROBE_WAIT_MS) {
              let timer: ReturnType<typeof setTimeout> | undefined;
              await Promise.race([running.done, new Promise((r) => (timer = setTimeout(r, PROBE_WAIT_MS)))]);
              clearTimeout(timer);
            } else {
              const probes = (b.probes ??= new Map());
              const probe = {
                at: now(),
                done: new Promise<void>((resolve) => {
                  endProbe = () => {
                    if (probes.get(door) === probe) probes.delete(door);
                    resolve();
                  };
                }),
              };
              probes.set(door, probe);
            }
          }
          if (settled) return;
          refill(b, now());
          if (buckets.get(id) !== b) buckets.set(id, b); // forgotten meanwhile (forgetIdle): it owes again
          const extra = estimateOf(b, door, b.at) - reserved;
          if (extra <= 0) return;
          if (b.tokens < extra) {
            settleNow();
            throw refusal(b, extra);
          }
          b.tokens -= extra;
          reserved += extra;
        },
        settleUncounted() {
          if (settled) return;
          settleNow();
          remember(b, door, burst, now());
        },
        settle(count, noun = "items") {
          if (settled) throw new Error("a rate reservation is settled once");
          settleNow();
          refill(b, now());
          if (buckets.get(id) !== b) buckets.set(id, b); // forgotten meanwhile (forgetIdle): it owes again
          remember(b, door, count, b.at);
          const extra = Math.max(1, count) - reserved;
          if (count > burst) {
            b.tokens = Math.max(-burst, b.tokens - extra);
            throw new HttpError(
              413,
              `${count} ${noun} in one request exceed this credential's rate-limit burst of ${burst}: send at most ${burst} per request`,
              headersOf(b),
            );
          }
          if (extra > 0 && b.tokens - extra < -burst) throw refusal(b, extra);
          b.tokens = Math.min(burst, b.tokens - extra);
          return headersOf(b);
        },
      };
    },
  };
}

interface Bucket {
  tokens: number;
  at: number;
  /** Per door: the largest item count seen lately and when (RateLimiter.reserve). */
  estimates?: Map<string, { count: number; at: number }>;
  /** Per door: the reservation being counted while no estimate is known (RateReservation.confirm). */
  probes?: Map<string, { at: number; done: Promise<void> }>;
}
