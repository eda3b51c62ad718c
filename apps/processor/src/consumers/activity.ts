import type { JsMsg } from "@nats-io/jetstream";
import type { ActivityKey } from "@cellar/shared/nats/catalogue";
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
  /** Chunks of markers matured in parallel, and entities per chunk (one transaction each). */
  concurrency: number;
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

  /** A batch key stands for the traces its write inserted: matured in chunks, one verdict for the key. */
  async function matureBatch(micros: string): Promise<Verdict> {
    const due = await tracesOfBatch(deps.maturation.sql, micros);
    let wait = 0;
    for (let i = 0; i < due.length; i += deps.chunk) {
      const pks = due.slice(i, i + deps.chunk);
      const outcomes = await matureIsolated(deps.maturation, "trace", pks);
      deps.observe?.outcomes("trace", outcomes);
      for (const pk of pks) {
        const v = verdict(outcomes, pk);
        if ("fail" in v) return v;
        wait = Math.max(wait, v.retryInMs);
      }
    }
    return { retryInMs: wait };
  }

  async function matureChunk(kind: EntityKind, pks: string[]): Promise<Map<string, Verdict>> {
    const out = new Map<string, Verdict>();
    if (kind === "batch") {
      for (const micros of pks) out.set(micros, await matureBatch(micros));
      return out;
    }
    const outcomes = await matureIsolated(deps.maturation, kind, pks);
    deps.observe?.outcomes(kind, outcomes);
    for (const pk of pks) out.set(pk, verdict(outcomes, pk));
    // A session whose key expired while it is still active (its coalesced trailing put was
    // lost to a crash): put the key again for the time it still has.
    if (kind === "session") {
      await Promise.all(
        pks
          .filter((pk) => outcomes.get(pk) === "still-active" && early(outcomes, pk) === 0)
          .map((pk) => deps.coalescer.rearm(pk, outcomes.dueInMs.get(pk) ?? 0)),
      );
    }
    return out;
  }

  return async (batch: Delivery<ActivityKey>[]): Promise<Outcome[]> => {
    type Work = { m: JsMsg; pk: string };
    const decided = new Map<JsMsg, Outcome>();
    const byKind: Record<EntityKind, Work[]> = { session: [], trace: [], batch: [] };
    for (const { value, msg: m } of batch) {
      const target = isExpiryMarker(value.headers) ? parseActivitySubject(deps.topology, value.subject) : null;
      if (!target)
        decided.set(m, "ack"); // a refresh, not an expiry
      else byKind[target.kind].push({ m, pk: target.pk });
    }
    const chunks: Array<{ kind: EntityKind; work: Work[] }> = [];
    for (const kind of ["session", "trace"] as const) {
      for (let i = 0; i < byKind[kind].length; i += deps.chunk)
        chunks.push({ kind, work: byKind[kind].slice(i, i + deps.chunk) });
    }
    for (const w of byKind.batch) chunks.push({ kind: "batch", work: [w] });
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(deps.concurrency, chunks.length) }, async () => {
        while (next < chunks.length) {
          const { kind, work } = chunks[next++];
          let verdicts: Map<string, Verdict>;
          try {
            verdicts = await matureChunk(
              kind,
              work.map((w) => w.pk),
            );
          } catch (err) {
            // Only what matureIsolated could not isolate gets here (recording a failure itself
            // failed: Postgres gone): the runtime retries the markers with backoff.
            deps.logger.error("maturation failed; will retry", { kind, size: work.length, err: err as Error });
            for (const w of work) decided.set(w.m, { fail: err });
            continue;
          }
          for (const w of work) {
            const v = verdicts.get(w.pk) ?? { retryInMs: 0 };
            if ("fail" in v) decided.set(w.m, { fail: v.fail });
            else if (v.retryInMs > 0) decided.set(w.m, { retryInMs: Math.ceil(v.retryInMs) + 20 });
            else {
              decided.set(w.m, "ack");
              deps.observe?.markerDone(w.m.time.getTime());
            }
          }
        }
      }),
    );
    return batch.map((d) => decided.get(d.msg) ?? { retryInMs: 2_000 });
  };
}
