/**
 * Backoff after failed sign-ins, per account: the first 4 failures in a row cost nothing, the 5th
 * locks the account for 30 s, and each further failure doubles the lock, up to 15 minutes. A
 * correct password resets the count; `user password` (admin CLI) clears it too. While locked,
 * sign-in answers 429 without checking the password, so guessing stops being worth it.
 */
export const FREE_FAILURES = 4;
export const FIRST_LOCK_MS = 30_000;
export const MAX_LOCK_MS = 15 * 60_000;

/** How long the account stays locked after its `failures`-th failure in a row. */
export function lockDurationMs(failures: number): number {
  if (failures <= FREE_FAILURES) return 0;
  return Math.min(MAX_LOCK_MS, FIRST_LOCK_MS * 2 ** (failures - FREE_FAILURES - 1));
}
