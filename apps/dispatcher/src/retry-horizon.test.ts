import { expect, test } from "bun:test";
import { planAfterFailure } from "./attempt.ts";
import { DELIVERY_JOB_LIFETIME_MS, MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, RETRY_HORIZON_MS } from "./retry.ts";

/** Runs a delivery whose receiver always fails, jumping the clock to each scheduled retry. */
function schedule(retryAfterMs: number | null, random = () => 1) {
  const created = new Date("2026-11-01T00:00:00Z");
  let at = created;
  const attemptsAt: number[] = [];
  for (let attempts = 0; ; attempts++) {
    attemptsAt.push(at.getTime() - created.getTime());
    const plan = planAfterFailure(
      { attempts, created_at: created },
      { kind: "failed", statusCode: 429, error: "HTTP 429", retryAfterMs },
      false,
      at,
      { retryTimeScale: 1, random },
    );
    if (plan.verdict.action !== "nak") return { attemptsAt, last: plan };
    at = plan.nextAttemptAt!;
  }
}

test("the horizon leaves the retry job room inside the DELIVERIES retention", () => {
  expect(RETRY_HORIZON_MS).toBeLessThan(DELIVERY_JOB_LIFETIME_MS);
});

test("Retry-After of 24 h on every attempt: every attempt lands inside the horizon and the delivery ends failed", () => {
  const { attemptsAt, last } = schedule(MAX_RETRY_AFTER_MS);
  expect(Math.max(...attemptsAt)).toBeLessThanOrEqual(RETRY_HORIZON_MS);
  expect(attemptsAt.length).toBeLessThanOrEqual(MAX_ATTEMPTS);
  expect(last.status).toBe("failed");
  expect(last.verdict).toEqual({ action: "term", reason: "last attempt failed" });
  // Without the clamp, four stretched retries alone would already pass the horizon.
  expect(attemptsAt.length).toBeGreaterThanOrEqual(4);
});

test("the plain curve (max jitter) is untouched by the horizon: nine attempts", () => {
  const { attemptsAt } = schedule(null);
  expect(attemptsAt).toHaveLength(MAX_ATTEMPTS);
  expect(Math.max(...attemptsAt)).toBeLessThan(RETRY_HORIZON_MS);
});
