import type { JsMsg } from "@nats-io/jetstream";
import { UNLANED, type ActivityKey } from "@cellar/shared/nats/catalogue";
import { createFairSlots } from "@cellar/shared/nats/fair-slots";
import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import type { Logger } from "@cellar/shared/logger";
import type { Topology } from "@cellar/shared/nats/topology";
import { EARLY_SECONDS, isExpiryMarker, parseActivitySubject, type EntityKind } from "../maturation/activity.ts";
import type { ActivityCoalescer } from "../maturation/coalesce.ts";
import { matureIsolated } from "../maturation/isolate.ts";
import { tracesOfBatch, type MaturationDeps, type Outcomes } from "../maturation/mature.ts";

export interface ActivityConsumerDeps {
  maturation: MaturationDeps;
  topology: Topology;
  logger: Logger;
  coalescer: ActivityCoalescer;
  /**
   * Chunks of markers matured in parallel, at most `perLane` (default all) of one tenant lane,
   * and entities per chunk (one transaction each).
   */
  concurrency: number;
  perLane?: number;
  chunk: number;
  observe?: { outcomes(kind: "session" | "trace", outcomes: Outcomes): void; markerDone(dueAtMs: number): void };
}

/** What becomes of one entity's marker: acked, retried after a delay, or failed to the runtime. */
type Verdict = { retryInMs: number } | { fail: unknown };

/**
 * The activity consumer: expiry markers matured in chunks (a transaction per chunk) through
 * matureIsolated, which owns failure isolation (a failing chunk retried one entity at a time, a
 * failing session recorded and backed off or parked). Here outcomes only become marker verdicts:
 * a backing-off session's marker is naked for its delay (acked once parked), a trace that failed
 * alone goes to the consume runtime (retried, or dead-lettered), the sweep being the safety net.
 */
export function activityHandler(deps: ActivityConsumerDeps) {
  // How long before a still-active entity's marker is retried: 0 = done (ack), else the time
  // until it is due (a marker that came early, see markerTtlSeconds).
  const early = (outcomes: Outcomes, pk: string) =>
    EARLY_SECONDS > 0 &&
    outcomes.get(pk) === "still-active" &&
    (outcomes.dueInMs.get(pk) ?? Infinity) <= (EARLY_SECONDS + 1) * 1000
      ? outcomes.dueInMs.get(pk)!
      : 0;
  const verdict = (outcomes: Outcomes, pk: string): Verdict => {
    if (outcomes.get(pk) === "failed") return { fail: outcomes.errors.get(pk) };
    if (outcomes.get(pk) === "backing-off") return { retryInMs: outcomes.dueInMs.get(pk)! };
    return { retryInMs: early(outcomes, pk) };
  };

  async function matureChunk(
    kind: "session" | "trace",
    lane: string | null,
    pks: string[],
  ): Promise<Map<string, Verdict>> {
    const out = new Map<string, Verdict>();
    const outcomes = await matureIsolated(deps.maturation, kind, pks);
    deps.observe?.outcomes(kind, outcomes);
    for (const pk of pks) out.set(pk, verdict(outcomes, pk));
    // A session whose key expired while it is still active (its coalesced trailing put was
    // lost to a crash): put the key again for the time it still has.
    if (kind === "session") {
      await Promise.all(
        pks
          .filter((pk) => outcomes.get(pk) === "still-active" && early(outcomes, pk) === 0)
          .map((pk) => deps.coalescer.rearm(pk, lane, outcomes.dueInMs.get(pk) ?? 0)),
      );
    }
    return out;
  }

  // Chunks in flight for every batch in flight (the runtime runs several, one lane each): at
  // most `concurrency` chunks in all, at most `perLane` of one lane, a freed slot to the lane
  // that waited longest (fair-slots.ts). Peak memory stays `concurrency` chunks
  // (docs/maturation.md, "Bounded memory"); one tenant's backlog leaves `concurrency - perLane`
  // for the others (docs/maturation.md, "Tenant lanes").
  const chunkSlots = createFairSlots(deps.concurrency, deps.perLane ?? deps.concurrency);
  return (batch: Delivery<ActivityKey>[]): Promise<Outcome[]> => handleBatch(batch);
  async function handleBatch(batch: Delivery<ActivityKey>[]): Promise<Outcome[]> {
    type Work = { m: JsMsg; pk: string; lane: string | null };
    const decided = new Map<JsMsg, Outcome>();
    const byKind: Record<EntityKind, Work[]> = { session: [], trace: [], batch: [] };
    for (const { value, msg: m } of batch) {
      const target = isExpiryMarker(value.headers) ? parseActivitySubject(deps.topology, value.subject) : null;
      if (!target)
        decided.set(m, "ack"); // a refresh, not an expiry
      else byKind[target.kind].push({ m, pk: target.pk, lane: target.lane });
    }
    // A batch key stands for the traces its write inserted for its lane's tenants: they join the
    // trace chunks, so a big write's traces mature in parallel chunks beside everything else, not
    // one chunk after another while the rest of the batch waits. Its marker gets one verdict for
    // all of them.
    const ofKey = new Map<JsMsg, string[]>();
    const resolved = await Promise.allSettled(
      byKind.batch.map((w) => tracesOfBatch(deps.maturation.sql, w.pk, w.lane)),
    );
    // A batch's markers are of one lane (the runtime's lane batches); the unlaned consumer's
    // (keys of before lanes) are of any tenant, and share its slots.
    const laneKey = (lane: string | null) => lane ?? UNLANED;
    const pksOf = { session: new Map<string, Set<string>>(), trace: new Map<string, Set<string>>() };
    const add = (kind: "session" | "trace", lane: string | null, pk: string) => {
      const key = laneKey(lane);
      if (!pksOf[kind].has(key)) pksOf[kind].set(key, new Set());
      pksOf[kind].get(key)!.add(pk);
    };
    const laneOfKey = new Map<string, string | null>();
    for (const w of [...byKind.session, ...byKind.trace, ...byKind.batch]) laneOfKey.set(laneKey(w.lane), w.lane);
    for (const w of byKind.session) add("session", w.lane, w.pk);
    for (const w of byKind.trace) add("trace", w.lane, w.pk);
    byKind.batch.forEach((w, i) => {
      const r = resolved[i];
      if (r.status === "rejected") {
        deps.logger.error("maturation failed; will retry", { kind: "batch", err: r.reason as Error });
        decided.set(w.m, { fail: r.reason });
        return;
      }
      ofKey.set(w.m, r.value);
      for (const pk of r.value) add("trace", w.lane, pk);
    });
    const chunks: Array<{ kind: "session" | "trace"; lane: string; pks: string[] }> = [];
    for (const kind of ["session", "trace"] as const)
      for (const [lane, set] of pksOf[kind]) {
        const pks = [...set];
        for (let i = 0; i < pks.length; i += deps.chunk) chunks.push({ kind, lane, pks: pks.slice(i, i + deps.chunk) });
      }
    const verdicts: Record<"session" | "trace", Map<string, Verdict>> = { session: new Map(), trace: new Map() };
    await Promise.all(
      chunks.map(async ({ kind, lane, pks }) => {
        const release = await chunkSlots.acquire(lane);
        try {
          for (const [pk, v] of await matureChunk(kind, laneOfKey.get(lane) ?? null, pks)) verdicts[kind].set(pk, v);
        } catch (err) {
          // Only what matureIsolated could not isolate gets here (recording a failure itself
          // failed: Postgres gone): the runtime retries the markers with backoff.
          deps.logger.error("maturation failed; will retry", { kind, size: pks.length, err: err as Error });
          for (const pk of pks) verdicts[kind].set(pk, { fail: err });
        } finally {
          release();
        }
      }),
    );
    const settle = (m: JsMsg, v: Verdict) => {
      if ("fail" in v) decided.set(m, { fail: v.fail });
      else if (v.retryInMs > 0) decided.set(m, { retryInMs: Math.ceil(v.retryInMs) + 20 });
      else {
        decided.set(m, "ack");
        deps.observe?.markerDone(m.time.getTime());
      }
    };
    for (const w of byKind.session) settle(w.m, verdicts.session.get(w.pk) ?? { retryInMs: 0 });
    for (const w of byKind.trace) settle(w.m, verdicts.trace.get(w.pk) ?? { retryInMs: 0 });
    for (const [m, pks] of ofKey) {
      // The key's verdict: the first trace that failed, else the longest wait of any of them.
      let v: Verdict = { retryInMs: 0 };
      for (const pk of pks) {
        const one = verdicts.trace.get(pk) ?? { retryInMs: 0 };
        if ("fail" in one) {
          v = one;
          break;
        }
        v = { retryInMs: Math.max(v.retryInMs, one.retryInMs) };
      }
      settle(m, v);
    }
    return batch.map((d) => decided.get(d.msg) ?? { retryInMs: 2_000 });
  }
}
