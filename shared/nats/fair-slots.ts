/**
 * In-flight slots shared by several lanes: at most `total` at once, at most `perLane` per lane,
 * and a freed slot goes to the lane that has waited longest among those under their cap. Each
 * lane's pull loop waits for a slot before it takes its next message, so every lane has at most
 * one waiter and the queue is a round-robin over the busy lanes. Work-conserving: one busy lane
 * alone may use `perLane` slots; `total - perLane` always remain for the others. Pure, no I/O.
 */
export function createFairSlots(total: number, perLane: number) {
  const cap = Math.max(1, Math.min(perLane, total));
  const active = new Map<string, number>();
  let inUse = 0;
  const waiting: Array<{ lane: string; grant: () => void }> = [];
  const take = (lane: string) => {
    inUse++;
    active.set(lane, (active.get(lane) ?? 0) + 1);
  };
  const free = (lane: string) => {
    inUse--;
    const n = (active.get(lane) ?? 1) - 1;
    if (n <= 0) active.delete(lane);
    else active.set(lane, n);
    // The longest waiter whose lane is under its cap.
    for (let i = 0; i < waiting.length && inUse < total; i++) {
      const w = waiting[i];
      if ((active.get(w.lane) ?? 0) >= cap) continue;
      waiting.splice(i, 1);
      take(w.lane);
      w.grant();
      return;
    }
  };
  return {
    /** Slots held by `lane` now. */
    held: (lane: string) => active.get(lane) ?? 0,
    /** Resolves with the release once `lane` holds a slot. */
    async acquire(lane: string): Promise<() => void> {
      if (inUse < total && (active.get(lane) ?? 0) < cap) take(lane);
      else await new Promise<void>((grant) => waiting.push({ lane, grant }));
      let released = false;
      return () => {
        if (released) return;
        released = true;
        free(lane);
      };
    },
  };
}
