import type { JetStreamClient } from "@nats-io/jetstream";
import type { Topology } from "@cellar/shared/nats/topology";
import type { Logger } from "@cellar/shared/logger";
import { activitySubject, markerTtlSeconds, refreshActivity, type ActivityEntity } from "./activity.ts";

/**
 * At most one activity-key put per session per `minIntervalMs`, with markers exactly as
 * precise as one put per write (docs/maturation.md, "Coalesced activity puts").
 *
 * A session written again within the interval of its last put is not put now. Instead a
 * trailing put is scheduled a whole number of seconds `j` after that write, with TTL
 * `window - j`: the key then expires at write + window, as a put at the write would have
 * (NATS TTLs are whole seconds, so the delay is rounded to seconds and the TTL to match).
 * Later writes before the trailing put move it.
 *
 * Crash safety does not rest on the trailing put: the key put at most `minIntervalMs` earlier
 * is live and expires no later than window after it; its marker then finds the session still
 * active and re-arms the key from Postgres (`rearm`), so a lost trailing put costs lateness of
 * at most a second, never a lost maturation. The INGEST messages of a coalesced write are
 * therefore acked without waiting for any put.
 *
 * Memory: one entry per session put within the last interval or with a trailing put due, so
 * bounded by the sessions written in `minIntervalMs` plus the window.
 */
export class ActivityCoalescer {
  private readonly lastPut = new Map<string, number>();
  /** pk -> { due: when to put, ttl: seconds, lane: its key's lane } */
  private readonly trailing = new Map<string, { due: number; ttl: number; lane: string | null }>();
  /** Trailing puts by tick (due / tickMs, rounded up): a tick visits only what is due. */
  private readonly buckets = new Map<number, Set<string>>();
  private lastPrune = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> = Promise.resolve();
  readonly enabled: boolean;

  constructor(
    private readonly deps: {
      js: JetStreamClient;
      topology: Topology;
      windowSeconds: number;
      logger: Logger;
      /** 0 disables coalescing (every write puts, as before). */
      minIntervalMs: number;
      now?: () => number;
      /** How often due trailing puts are sent (ms). */
      tickMs?: number;
    },
  ) {
    // A trailing put needs TTL >= 1 s after waiting up to the interval (rounded up).
    this.enabled = deps.minIntervalMs > 0 && deps.windowSeconds - Math.ceil(deps.minIntervalMs / 1000) >= 1;
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  start(): void {
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
  }

  /** Sends the trailing puts still scheduled (shutdown): their sessions keep precise markers. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush(Infinity);
  }

  /**
   * Refreshes the keys of entities that just got new rows. Resolves when the puts that must
   * happen now are stored; coalesced sessions get a trailing put later.
   */
  async refresh(entities: ActivityEntity[]): Promise<void> {
    if (!this.enabled) return refreshActivity(this.deps.js, this.deps.topology, entities, this.deps.windowSeconds);
    const now = this.now();
    const putNow: ActivityEntity[] = [];
    for (const e of entities) {
      if (e.kind !== "session") {
        putNow.push(e);
        continue;
      }
      const last = this.lastPut.get(e.pk);
      if (last === undefined || now - last >= this.deps.minIntervalMs) {
        this.lastPut.set(e.pk, now);
        this.unschedule(e.pk);
        putNow.push(e);
      } else {
        const waitS = Math.max(1, Math.ceil((last + this.deps.minIntervalMs - now) / 1000));
        this.unschedule(e.pk);
        const due = now + waitS * 1000;
        this.trailing.set(e.pk, { due, ttl: markerTtlSeconds(this.deps.windowSeconds) - waitS, lane: e.lane });
        const b = Math.ceil(due / this.tickMs);
        let set = this.buckets.get(b);
        if (!set) this.buckets.set(b, (set = new Set()));
        set.add(e.pk);
      }
    }
    await refreshActivity(this.deps.js, this.deps.topology, putNow, this.deps.windowSeconds);
  }

  /**
   * Re-arms the key of a session its marker found still active, for the time it still has, in
   * the lane of that marker (a key written before lanes is re-armed in its tenant's lane).
   */
  async rearm(pk: string, lane: string | null, dueInMs: number): Promise<void> {
    const ttl = Math.max(1, Math.ceil(dueInMs / 1000));
    this.lastPut.set(pk, this.now());
    await this.deps.js.publish(activitySubject(this.deps.topology, { kind: "session", pk, lane }), "1", {
      ttl: `${ttl}s`,
      timeout: 10_000,
    });
  }

  private get tickMs(): number {
    return this.deps.tickMs ?? 50;
  }

  private unschedule(pk: string): void {
    const t = this.trailing.get(pk);
    if (!t) return;
    this.trailing.delete(pk);
    const b = Math.ceil(t.due / this.tickMs);
    const set = this.buckets.get(b);
    set?.delete(pk);
    if (set?.size === 0) this.buckets.delete(b);
  }

  private tick(): void {
    this.flushing = this.flushing
      .then(() => this.flush(this.now()))
      .catch((err) =>
        this.deps.logger.warn("trailing activity puts failed; markers re-arm them", { err: err as Error }),
      );
  }

  private async flush(until: number): Promise<void> {
    const now = this.now();
    const due: Array<Promise<unknown>> = [];
    const lastBucket = Math.floor(until / this.tickMs);
    for (const [b, set] of this.buckets) {
      if (b > lastBucket) continue;
      this.buckets.delete(b);
      for (const pk of set) {
        const t = this.trailing.get(pk)!;
        this.trailing.delete(pk);
        // Expiry stays at write + window whenever this runs (a late tick, or early at stop);
        // rounded up: a marker must never come before the session is due.
        const ttl = Math.max(1, Math.ceil((t.due + t.ttl * 1000 - now) / 1000));
        this.lastPut.set(pk, now);
        due.push(
          this.deps.js.publish(activitySubject(this.deps.topology, { kind: "session", pk, lane: t.lane }), "1", {
            ttl: `${ttl}s`,
            timeout: 10_000,
          }),
        );
      }
    }
    if (now - this.lastPrune >= 1000) {
      this.lastPrune = now;
      for (const [pk, at] of this.lastPut)
        if (now - at >= this.deps.minIntervalMs && !this.trailing.has(pk)) this.lastPut.delete(pk);
    }
    await Promise.all(due);
  }

  /** Entries held (tests, metrics). */
  get size(): { recent: number; trailing: number } {
    return { recent: this.lastPut.size, trailing: this.trailing.size };
  }
}
