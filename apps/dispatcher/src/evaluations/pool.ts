import pLimit, { type LimitFunction } from "p-limit";

export interface TenantPoolOptions {
  /** Work items in flight in this process, all tenants. */
  concurrency: number;
  /** Work items in flight for one tenant (at most `concurrency`). */
  tenantConcurrency: number;
}

/**
 * A bounded worker pool shared by tenants (p-limit twice): an item first waits for one of its
 * tenant's `tenantConcurrency` slots, then for one of the process's `concurrency`. A tenant
 * therefore has at most `tenantConcurrency` items in the shared queue, and another tenant's item
 * waits behind at most that many of each busy tenant, never behind a whole batch of 100.
 * A tenant's own limiter exists only while it has items in hand (no growth with tenant count).
 * No cycle: a tenant slot is held while waiting for a process slot, never the other way round.
 */
export function createTenantPool(opts: TenantPoolOptions) {
  const all = pLimit(opts.concurrency);
  const tenants = new Map<string, { limit: LimitFunction; items: number }>();
  return {
    run<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
      let lane = tenants.get(tenantId);
      if (!lane) tenants.set(tenantId, (lane = { limit: pLimit(opts.tenantConcurrency), items: 0 }));
      const held = lane;
      held.items++;
      return held
        .limit(() => all(work))
        .finally(() => {
          if (--held.items === 0) tenants.delete(tenantId);
        });
    },
    /** Items running now (tests, metrics). */
    get active() {
      return all.activeCount;
    },
    /** Tenants with items in hand (tests). */
    get tenants() {
      return tenants.size;
    },
  };
}

export type TenantPool = ReturnType<typeof createTenantPool>;
