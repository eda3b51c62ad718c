import { classifyFailure, sqlState } from "@cellar/shared/nats/failure";
import * as maturationState from "@cellar/shared/maturation/state";
import { DEFAULT_FAILURE_POLICY, retryDelayForFailure } from "./failure-policy.ts";
import { matureSessions, matureTraces, newOutcomes, type MaturationDeps, type Outcomes } from "./mature.ts";

/**
 * Failure isolation of maturation, the one place for it (docs/maturation.md, "Failure
 * isolation"): the marker consumer and the sweep both mature through matureIsolated.
 */

const TRANSIENT_RETRY_MS = 2_000;
/** Failures that say nothing about the session: a dependency down, or a lock conflict. */
function notTheSessionsFault(err: unknown): boolean {
  const state = sqlState(err);
  return classifyFailure(err) === "transient" || state === "40P01" || state === "40001";
}

/**
 * Records a failed maturation of one session (the failed transaction rolled back): the attempt
 * count, the error, when to retry, and after `maxAttempts` parks it. New activity after that
 * un-parks it and restarts the count. Returns how long to wait before the next attempt, or null
 * when parked.
 */
export async function recordMaturationFailure(
  deps: MaturationDeps,
  sessionPk: string,
  err: unknown,
): Promise<number | null> {
  const policy = deps.failurePolicy ?? DEFAULT_FAILURE_POLICY;
  const message = (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 1_000);
  const failures = await maturationState.recordFailure(deps.sql, sessionPk, message);
  if (failures === null) return null;
  const parked = failures >= policy.maxAttempts;
  const delay = retryDelayForFailure(failures, policy);
  if (parked) {
    await maturationState.park(deps.sql, sessionPk);
    deps.logger.error("session maturation failed for good; parked until new activity (admin: maturation failures)", {
      sessionPk,
      failures,
      err: message,
    });
    return null;
  }
  await maturationState.backOff(deps.sql, sessionPk, new Date(Date.now() + delay));
  deps.logger.warn("session maturation failed; will retry", { sessionPk, failures, retryInMs: delay, err: message });
  return delay;
}

/**
 * Matures a chunk in one transaction; if that throws, each entity alone, so one bad session
 * never holds back the others. A session that fails alone is recorded (recordMaturationFailure)
 * and reported as `backing-off` (with its delay in dueInMs) or `parked`; one that hit a transient
 * failure (not its fault) as `backing-off` for 2 s, not counted. A trace that fails alone is
 * reported `failed` with its error (`errors`): the caller hands it to the consume runtime, which
 * retries or dead-letters its marker; the sweep is the safety net.
 */
export async function matureIsolated(
  deps: MaturationDeps,
  kind: "session" | "trace",
  pks: string[],
): Promise<Outcomes> {
  const mature = kind === "session" ? matureSessions : matureTraces;
  try {
    return await mature(deps, pks);
  } catch (err) {
    if (pks.length > 1)
      deps.logger.warn("maturation chunk failed; retrying one by one", { kind, size: pks.length, err: err as Error });
    const outcomes = newOutcomes(pks);
    for (const pk of pks) {
      try {
        // A chunk of one has failed alone already: record it, no second attempt.
        if (pks.length === 1) throw err;
        const one = await mature(deps, [pk]);
        outcomes.set(pk, one.get(pk)!);
        if (one.dueInMs.has(pk)) outcomes.dueInMs.set(pk, one.dueInMs.get(pk)!);
      } catch (oneErr) {
        if (kind === "trace") {
          deps.logger.error("trace maturation failed; will retry", { pk, err: oneErr as Error });
          outcomes.set(pk, "failed");
          outcomes.errors.set(pk, oneErr);
          continue;
        }
        if (notTheSessionsFault(oneErr)) {
          // Postgres or NATS unavailable, a deadlock, a serialization failure: not this
          // session's fault, so not counted toward parking it. Retried shortly.
          deps.logger.warn("session maturation hit a transient failure; will retry", { pk, err: oneErr as Error });
          outcomes.set(pk, "backing-off");
          outcomes.dueInMs.set(pk, TRANSIENT_RETRY_MS);
          continue;
        }
        const delay = await recordMaturationFailure(deps, pk, oneErr);
        outcomes.set(pk, delay === null ? "parked" : "backing-off");
        if (delay !== null) outcomes.dueInMs.set(pk, delay);
      }
    }
    return outcomes;
  }
}
