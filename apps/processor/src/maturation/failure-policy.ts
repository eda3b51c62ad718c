/** Retry policy of a session whose maturation fails (docs/maturation.md, "Failure isolation"). */
export interface FailurePolicy {
  /** Attempts before the session is parked as failed. */
  maxAttempts: number;
  /** Delay after the n-th failure: baseMs x 2^(n-1), at most maxMs. */
  baseMs: number;
  maxMs: number;
}
export const DEFAULT_FAILURE_POLICY: FailurePolicy = { maxAttempts: 5, baseMs: 10_000, maxMs: 10 * 60_000 };

export function retryDelayForFailure(failures: number, policy: FailurePolicy = DEFAULT_FAILURE_POLICY): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failures - 1));
}
