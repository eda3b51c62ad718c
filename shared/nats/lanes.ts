/**
 * Tenant lanes (docs/webhooks.md, Fairness): MATURED and DELIVERIES messages are published to
 * `<subject>.<lane>`, lane = a stable hash of the tenant id mod LANE_COUNT, and each lane has its
 * own durable consumer, pulled fairly. A backlog in one lane delays only the tenants hashed to it.
 * Pure: no I/O.
 */

/**
 * How many lanes. A catalogue constant, not a setting: changing it re-hashes every tenant onto
 * other subjects and consumers, an upgrade like the one from the single consumer (catalogue.ts,
 * `retired`). 16: two tenants share a lane with probability 1/16, and 32 lane consumers cost
 * the dispatcher 32 pull requests and /metrics 32 consumer reads, which stays small.
 */
export const LANE_COUNT = 16;

/** FNV-1a (32 bit) of the UTF-8 bytes: stable across processes, versions and runtimes. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The lane of a tenant (or of any key when the tenant is unknown), 0 .. count-1. */
export const laneOf = (key: string, count = LANE_COUNT): number => fnv1a(key) % count;

/** The lane as a subject token and consumer-name suffix: `00` .. `15`. */
export const laneToken = (lane: number): string => String(lane).padStart(2, "0");
