/**
 * Caps how many attempts run at once per key (one key per subscription endpoint). In-process:
 * with N dispatcher instances an endpoint sees at most N x cap concurrent requests.
 */
export function createKeyedLimiter(cap: number) {
  const active = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  return {
    /** How many callers wait for `key` right now. */
    queued: (key: string) => waiting.get(key)?.length ?? 0,
    async acquire(key: string): Promise<() => void> {
      const n = active.get(key) ?? 0;
      if (n < cap) active.set(key, n + 1);
      else
        await new Promise<void>((resolve) => {
          const queue = waiting.get(key);
          if (queue) queue.push(resolve);
          else waiting.set(key, [resolve]);
        });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const queue = waiting.get(key);
        const next = queue?.shift();
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
