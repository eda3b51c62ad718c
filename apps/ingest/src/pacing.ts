/**
 * Refusals paced for clients that ignore Retry-After (issue 41, docs/ingestion.md "Rate limits"):
 * a credential refused 429 that comes back before the Retry-After it was told gets its next 429
 * only when that time comes (about `maxHoldMs` at most, spread below), instead of at once. A client that waits
 * as told, or is refused for the first time, is answered at once, as before.
 *
 * Why: a closed-loop flooder (each connection sends again as soon as it is answered) otherwise
 * makes the ingest host answer thousands of refusals a second (2,600-12,000/s from 32 connections
 * in bench/flood.ts), CPU every other tenant's requests wait behind. Paced, each of its
 * connections gets about one answer per Retry-After.
 *
 * Spread: a credential's held answers come due at least `spreadMs` apart (default
 * `maxHoldMs / maxHeldPerCredential`, 31 ms), not all when its Retry-After ends. Held until the
 * same instant, 32 connections were answered together and sent again together, once a second:
 * a burst of 32 refusals that another tenant's request arriving then waited behind. Spread, they
 * come back one at a time and stay so. A held answer goes at most `maxHoldMs` plus `spreadMs` for
 * each answer of its credential held before it (2 s with the defaults).
 *
 * Bounded: at most `maxHeldPerCredential` answers held per credential and `maxHeld` in all, and
 * only requests whose body is declared (Content-Length) and fits `maxHeldBytes` with the others
 * held (an unread body may sit in the server's buffers meanwhile); beyond any bound the 429 is
 * answered at once. The Retry-After ends remembered are at most `maxTracked` credentials.
 */
export interface RefusalPacing {
  /**
   * Resolves when the 429 just decided for `credential` (the request's Authorization value, or
   * its address before authentication) may be sent. `bodyBytes`: its declared length (null:
   * unknown, not held).
   */
  pace(credential: string, retryAfterSeconds: number, bodyBytes: number | null): Promise<void>;
  /** Answers held right now (tests, metrics). */
  held(): number;
}

export interface RefusalPacingOptions {
  maxHoldMs?: number;
  maxHeldPerCredential?: number;
  maxHeld?: number;
  maxHeldBytes?: number;
  maxTracked?: number;
  /** Least gap between two of a credential's held answers coming due (ms). */
  spreadMs?: number;
  now?: () => number;
}

export function createRefusalPacing(opts: RefusalPacingOptions = {}): RefusalPacing {
  const maxHoldMs = opts.maxHoldMs ?? 1_000;
  const maxPer = opts.maxHeldPerCredential ?? 32;
  const maxHeld = opts.maxHeld ?? 10_000;
  const maxBytes = opts.maxHeldBytes ?? 64 * 1024 * 1024;
  const maxTracked = opts.maxTracked ?? 100_000;
  const spreadMs = opts.spreadMs ?? maxHoldMs / maxPer;
  const now = opts.now ?? Date.now;
  /** Per credential: when the latest Retry-After it was told ends (epoch ms). */
  const until = new Map<string, number>();
  const heldBy = new Map<string, number>();
  /** Per credential with answers held: when the latest of them comes due (epoch ms). */
  const lastDue = new Map<string, number>();
  let held = 0;
  let heldBytes = 0;

  function remember(credential: string, end: number, t: number) {
    if (!until.has(credential) && until.size >= maxTracked) {
      for (const [c, e] of until) if (e <= t) until.delete(c);
      if (until.size >= maxTracked) return;
    }
    until.set(credential, Math.max(until.get(credential) ?? 0, end));
  }

  return {
    held: () => held,
    async pace(credential, retryAfterSeconds, bodyBytes) {
      const t = now();
      const told = until.get(credential);
      remember(credential, t + Math.max(0, retryAfterSeconds) * 1000, t);
      if (told === undefined || t >= told) return; // first refusal, or it waited as told
      const mine = heldBy.get(credential) ?? 0;
      if (bodyBytes === null || mine >= maxPer || held >= maxHeld || heldBytes + bodyBytes > maxBytes) return;
      // Due when its Retry-After ends, or a gap after the credential's previous held answer: at
      // most maxHoldMs from now, plus a gap for each of the credential's answers held before it
      // (those that came with it in a burst are let out one at a time, so they come back so).
      const due = Math.min(Math.max(told, (lastDue.get(credential) ?? 0) + spreadMs), t + maxHoldMs + mine * spreadMs);
      lastDue.set(credential, Math.max(due, lastDue.get(credential) ?? 0));
      heldBy.set(credential, mine + 1);
      held++;
      heldBytes += bodyBytes;
      try {
        await new Promise((resolve) => setTimeout(resolve, due - t));
      } finally {
        const left = (heldBy.get(credential) ?? 1) - 1;
        if (left > 0) heldBy.set(credential, left);
        else {
          heldBy.delete(credential);
          lastDue.delete(credential);
        }
        held--;
        heldBytes -= bodyBytes;
      }
    },
  };
}
