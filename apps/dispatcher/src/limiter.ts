/** A FIFO of waiters with O(1) take: `Array.shift` copies the array, which under a backlog of thousands was a hot spot. */
class WaitQueue {
  private items: Array<() => void> = [];
  private head = 0;
  get length() {
    return this.items.length - this.head;
  }
  push(waiter: () => void) {
    this.items.push(waiter);
  }
  take(): (() => void) | undefined {
    if (this.head >= this.items.length) return undefined;
    const next = this.items[this.head];
    this.items[this.head++] = undefined as unknown as () => void; // let it be collected
    // Compact once the taken prefix is most of the array (amortized O(1)).
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return next;
  }
}

/** Weight of the newest hold in a key's running average (about the last ten attempts count). */
const HOLD_WEIGHT = 0.2;

/**
 * Caps how many attempts run at once per key (one key per subscription endpoint). In-process:
 * with N dispatcher instances an endpoint sees at most N x cap concurrent requests.
 *
 * Also keeps, per key, a running average of how long a slot is held and when one was last
 * released, so `expectedWaitMs` can tell a busy key (fast attempts, a queue that moves) from a
 * slow or hung one: unknown (Infinity) without history, or when every slot has been held past
 * `stallMs` without one coming back.
 */
export function createKeyedLimiter(cap: number, opts: { now?: () => number } = {}) {
  const now = opts.now ?? (() => performance.now());
  const active = new Map<string, number>();
  const waiting = new Map<string, WaitQueue>();
  const history = new Map<string, { holdMs: number; lastReleaseAt: number }>();
  return {
    /** How many callers wait for `key` right now. */
    queued: (key: string) => waiting.get(key)?.length ?? 0,
    /** How long a caller queuing now would wait for a slot, from the recent hold times. */
    expectedWaitMs(key: string, stallMs: number): number {
      const h = history.get(key);
      if (!h) return Number.POSITIVE_INFINITY;
      if ((active.get(key) ?? 0) >= cap && now() - h.lastReleaseAt > stallMs) return Number.POSITIVE_INFINITY;
      return (((waiting.get(key)?.length ?? 0) + 1) * h.holdMs) / cap;
    },
    async acquire(key: string): Promise<() => void> {
      const n = active.get(key) ?? 0;
      if (n < cap) active.set(key, n + 1);
      else
        await new Promise<void>((resolve) => {
          let queue = waiting.get(key);
          if (!queue) waiting.set(key, (queue = new WaitQueue()));
          queue.push(resolve);
        });
      const grantedAt = now();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const at = now();
        const h = history.get(key);
        if (h) {
          h.holdMs += HOLD_WEIGHT * (at - grantedAt - h.holdMs);
          h.lastReleaseAt = at;
        } else {
          if (history.size >= 10_000) history.clear(); // bounded: one entry per host or tenant seen
          history.set(key, { holdMs: at - grantedAt, lastReleaseAt: at });
        }
        const queue = waiting.get(key);
        const next = queue?.take();
        if (queue && queue.length === 0) waiting.delete(key);
        if (next)
          next(); // hand the slot over; the active count stays
        else {
          const left = (active.get(key) ?? 1) - 1;
          if (left <= 0) active.delete(key);
          else active.set(key, left);
        }
      };
    },
  };
}
