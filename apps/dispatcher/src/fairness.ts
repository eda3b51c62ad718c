import { createKeyedLimiter } from "./limiter.ts";

/** What fairness needs to know about a delivery about to be attempted. */
export interface FairnessKey {
  tenantId: string;
  /** The destination URL: its host (with port) is the unit of the per-destination cap. */
  url: string;
}

export interface FairnessOptions {
  /** Attempts in flight in this process, all tenants. */
  concurrency: number;
  /** Attempts in flight per destination host (whatever subscriptions, tenants point at it). */
  hostCap: number;
  /** Attempts in flight per tenant: no tenant holds more than this share of `concurrency`. */
  tenantCap: number;
  /** Clock in ms for the hold times (tests); default performance.now. */
  now?: () => number;
}

/** Attempts in flight per process, all tenants (DispatcherDeps.concurrency). */
export const DEFAULT_CONCURRENCY = 256;
/** Attempts in flight per destination host per process (DispatcherDeps.endpointConcurrency). */
export const DEFAULT_ENDPOINT_CONCURRENCY = 32;

/** The share of the process's attempt slots one tenant may hold (the rest stay free for others). */
export const TENANT_SHARE = 0.25;

/**
 * Who may attempt now, so that one tenant cannot starve another (docs/webhooks.md, Fairness):
 * - per destination host, not per subscription: five subscriptions (or five tenants) aimed at
 *   one host share one cap, so a host is never hit harder because it is named more often;
 * - per tenant: a tenant whose destinations hang (each attempt holds a slot up to the timeout)
 *   fills at most `tenantCap` of the process's `concurrency` slots;
 * - `crowded` says when a delivery should not even queue here (its host's or tenant's queue is
 *   long and slow to move, crowdedQueue): the caller hands it to DELIVERIES or naks it briefly, freeing the consumer's slot, and
 *   the retry curve stays nak(delay).
 * In-process, like every cap here: N dispatcher instances allow N times each.
 */
export function createFairness(opts: FairnessOptions) {
  const hosts = createKeyedLimiter(opts.hostCap, { now: opts.now });
  const tenants = createKeyedLimiter(opts.tenantCap, { now: opts.now });
  const global = createKeyedLimiter(opts.concurrency);
  const hostOf = (url: string) => {
    try {
      return new URL(url).host.toLowerCase();
    } catch {
      return url;
    }
  };
  return {
    crowded(k: FairnessKey): boolean {
      const host = hostOf(k.url);
      return (
        crowdedQueue(hosts.queued(host), opts.hostCap * 4, () => hosts.expectedWaitMs(host, CROWDED_WAIT_MS)) ||
        crowdedQueue(tenants.queued(k.tenantId), opts.tenantCap * 2, () =>
          tenants.expectedWaitMs(k.tenantId, CROWDED_WAIT_MS),
        )
      );
    },
    /** Waits for a host slot, then a tenant slot, then a process slot; returns the release. */
    async acquire(k: FairnessKey): Promise<() => void> {
      const releaseHost = await hosts.acquire(hostOf(k.url));
      const releaseTenant = await tenants.acquire(k.tenantId);
      const releaseGlobal = await global.acquire("*");
      return () => {
        releaseGlobal();
        releaseTenant();
        releaseHost();
      };
    },
  };
}

/**
 * A queue past `soft` is crowded unless it moves: its slots come back often enough that a caller
 * queuing now waits under CROWDED_WAIT_MS (a busy, answering receiver). Without history, when
 * every slot has been held past that wait (a hung receiver), or past CROWDED_HARD_FACTOR x `soft`,
 * it is crowded as before. Handing a delivery to DELIVERIES costs a publish, a consume, an ack and
 * a load query; a backlog to one busy host used to hand on 70% of its first attempts.
 */
function crowdedQueue(queued: number, soft: number, expectedWaitMs: () => number): boolean {
  if (queued < soft) return false;
  return queued >= soft * CROWDED_HARD_FACTOR || expectedWaitMs() >= CROWDED_WAIT_MS;
}

/** A queue whose expected wait is under this stays in line (see crowdedQueue). */
export const CROWDED_WAIT_MS = 1000;
/** Past this multiple of the soft queue bound, a queue is crowded however fast it moves. */
export const CROWDED_HARD_FACTOR = 8;

/** Longest wait before a crowded retry job looks again (before jitter). */
export const CROWDED_MAX_DELAY_MS = 32_000;

/**
 * How long a retry job whose host or tenant is crowded waits before it looks again: 1 s, doubling
 * with the message's delivery count up to 32 s, jittered x0.5-1.5. A tenant with 100,000 jobs
 * behind a hung destination would otherwise bring each back every second, a Postgres load and a
 * redelivery per job per second that every other tenant pays for.
 */
export function crowdedDelayMs(deliveryCount: number, random: () => number = Math.random): number {
  const base = Math.min(CROWDED_MAX_DELAY_MS, 1000 * 2 ** Math.min(Math.max(deliveryCount - 1, 0), 5));
  return Math.round(base * (0.5 + random()));
}
