import type postgres from "postgres";
import { SecretUnreadableError } from "@cellar/shared/crypto";
import type { Logger } from "@cellar/shared/logger";
import type { Cidr } from "@cellar/shared/webhooks/address";
import { checkDestination, type DestinationCheck, type ResolveDns } from "@cellar/shared/webhooks/destination";
import { deliveryHeaders } from "@cellar/shared/webhooks/signing";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import type { DeliveryStatus, SubscriptionTarget, SuccessRecord } from "@cellar/shared/webhooks/delivery-state";
import { MAX_ATTEMPTS, parseRetryAfter, retryDelayForAttempt, RETRY_HORIZON_MS } from "./retry.ts";

/**
 * Sends one request to the validated `address` only (never a fresh DNS lookup) and must not
 * follow redirects. Production pins the connection to the address; tests pass global fetch,
 * which msw intercepts.
 */
export type DeliveryFetch = (
  url: string,
  init: RequestInit & { redirect: "manual" },
  target: { address: string; hostname: string },
) => Promise<Response>;

export interface AttemptDeps {
  sql: postgres.Sql;
  logger: Logger;
  /**
   * Decrypts a sealed secret with its subscription id as associated data (cached by ciphertext,
   * so a rotation is picked up at once); throws SecretUnreadableError when no key opens it.
   */
  openSecret: (sealed: string, subscriptionId: string) => Promise<string>;
  /** Batched deliveryState.recordSuccesses. */
  recordSuccess: (rec: SuccessRecord) => Promise<void>;
  fetch: DeliveryFetch;
  resolveDns: ResolveDns;
  allowlist: Cidr[];
  /** Verdicts for URLs whose host is an IP literal: no DNS involved, so they cannot change. */
  literalCache?: Map<string, DestinationCheck>;
  now: () => Date;
  retryTimeScale: number;
  timeoutMs: number;
  random: () => number;
}

/**
 * The one result of the delivery path (delivery-attempts.ts), from the receiver's classified answer to
 * the stream's ack: `ack` = nothing left to do (delivered, or done before); `term` = finished
 * without success; `nak` = try again in `delayMs`, the retry job carrying on after attempt
 * `afterAttempt` (filled in by the path). Each consumer maps it once: DELIVERIES to its
 * message's outcome, MATURED to a retry job handed on.
 */
export type Verdict =
  | { action: "ack" }
  | { action: "term"; reason: string }
  | { action: "nak"; delayMs: number; afterAttempt?: number };

/** Failures for this long without one success disable the subscription (contract: Limits). */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;

export interface Loaded extends SubscriptionTarget {
  id: string;
  tenant_id: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  /** When the delivery was created: its retries end within RETRY_HORIZON_MS of it. */
  created_at: Date;
}

/** Delivery rows with their subscription, in the order of `ids` (undefined = gone). */
export async function loadDeliveries(sql: postgres.Sql, ids: string[]): Promise<Array<Loaded | undefined>> {
  const rows = await sql<Loaded[]>`
    select d.id, d.tenant_id, d.body, d.status, d.attempts, d.next_attempt_at, d.created_at, d.subscription_id, s.url, s.enabled, s.secret_encrypted,
      s.previous_secret_encrypted, s.previous_secret_expires_at
    from webhook_deliveries d join webhook_subscriptions s on s.id = d.subscription_id
    where d.id = any(${ids}::text[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id));
}

/** The receiver's answer (or its absence) classified: the input of the record stage. */
export type SendResult =
  | { kind: "delivered"; statusCode: number }
  | { kind: "failed"; statusCode: number | null; error: string; retryAfterMs?: number | null }
  | { kind: "disable"; statusCode: number | null; error: string; reason: string };

/**
 * What follows a failed attempt (pure): retry per the curve, stretched by Retry-After but never
 * past RETRY_HORIZON_MS from the delivery's creation (the job must still exist when the retry
 * comes due), or give up. An attempt at or past the horizon, the ninth, or a manual one is final.
 */
export function planAfterFailure(
  row: Pick<Loaded, "attempts" | "created_at">,
  outcome: Exclude<SendResult, { kind: "delivered" }>,
  manual: boolean,
  startedAt: Date,
  opts: Pick<AttemptDeps, "retryTimeScale" | "random">,
): { verdict: Verdict; status: Exclude<DeliveryStatus, "delivered">; nextAttemptAt: Date | null } {
  const attempt = row.attempts + 1;
  if (outcome.kind === "disable")
    return { verdict: { action: "term", reason: outcome.reason }, status: "stopped", nextAttemptAt: null };
  const horizon = row.created_at.getTime() + RETRY_HORIZON_MS;
  if (manual || attempt >= MAX_ATTEMPTS || startedAt.getTime() >= horizon) {
    return {
      verdict: { action: "term", reason: manual ? "manual attempt failed" : "last attempt failed" },
      status: "failed",
      nextAttemptAt: null,
    };
  }
  const curve = retryDelayForAttempt(attempt + 1, opts.retryTimeScale, opts.random);
  // Retry-After moves the next attempt later, never earlier (contract: Delivery rules 8).
  const delayMs = Math.max(1, Math.min(Math.max(curve, outcome.retryAfterMs ?? 0), horizon - startedAt.getTime()));
  return {
    verdict: { action: "nak", delayMs },
    status: "pending",
    nextAttemptAt: new Date(startedAt.getTime() + delayMs),
  };
}

/** Waits for the right to contact the destination; returns its release (fairness.ts). */
export type Slot = () => Promise<() => void>;
const noSlot: Slot = async () => () => {};

/**
 * One attempt of one delivery, in two stages: `send` (re-validates the destination, signs the
 * stored body, POSTs it, classifies the answer) and `record` (the attempt, the delivery's next
 * status and the subscription's health). Expected receiver behaviour (410, timeouts) is data
 * here, never an exception. `slot` is held for the send only: it caps what a destination and a
 * tenant have in flight, and the record (a batched statement, a few ms under load) is no work
 * of the destination's. Holding it through the record made a fast receiver's slots look busy,
 * and a busy host's first attempts crowded out to DELIVERIES.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  row: Loaded,
  manual: boolean,
  slot: Slot = noSlot,
): Promise<Verdict> {
  if (!row.enabled) {
    await deliveryState.stop(deps.sql, row.id);
    return { action: "term", reason: "subscription disabled" };
  }
  const release = await slot();
  let sent: { result: SendResult; startedAt: Date; durationMs: number };
  try {
    const startedAt = deps.now();
    const t0 = performance.now();
    const result = await send(deps, row, startedAt);
    sent = { result, startedAt, durationMs: Math.round(performance.now() - t0) };
  } finally {
    release();
  }
  return record(deps, row, sent.result, { manual, startedAt: sent.startedAt, durationMs: sent.durationMs });
}

/**
 * Records one attempt through the delivery-state transitions and decides what follows: a
 * success ends the delivery; a failure is retried per planAfterFailure, or finishes it; a
 * disabling answer, or failures for FAILING_DISABLE_MS, disable the subscription.
 */
async function record(
  deps: AttemptDeps,
  row: Loaded,
  result: SendResult,
  at: { manual: boolean; startedAt: Date; durationMs: number },
): Promise<Verdict> {
  const attempt = row.attempts + 1;
  const { startedAt, durationMs } = at;
  if (result.kind === "delivered") {
    await deps.recordSuccess({
      deliveryId: row.id,
      subscriptionId: row.subscription_id,
      attempt,
      statusCode: result.statusCode,
      durationMs,
      attemptedAt: startedAt,
    });
    return { action: "ack" };
  }
  const plan = planAfterFailure(row, result, at.manual, startedAt, deps);
  const { failingSince } = await deliveryState.recordFailure(deps.sql, {
    deliveryId: row.id,
    subscriptionId: row.subscription_id,
    attempt,
    statusCode: result.statusCode,
    durationMs,
    error: result.error,
    attemptedAt: startedAt,
    status: plan.status,
    nextAttemptAt: plan.nextAttemptAt,
  });
  let disableReason = result.kind === "disable" ? result.reason : null;
  if (!disableReason && failingSince && startedAt.getTime() - failingSince.getTime() >= FAILING_DISABLE_MS)
    disableReason = "failing";
  if (!disableReason) return plan.verdict;
  await deliveryState.disableSubscriptionAndStop(deps.sql, row.subscription_id, row.id, disableReason, startedAt);
  return plan.verdict.action === "nak"
    ? { action: "term", reason: `subscription disabled: ${disableReason}` }
    : plan.verdict;
}

/** How much of a receiver's answer is read (raw bytes, never inflated); the rest is cancelled. */
export const RESPONSE_PREFIX_BYTES = 4 * 1024;

/**
 * Everything an attempt waits on (DNS, connect, the answer's prefix) runs under one deadline of
 * `timeoutMs`, so a resolver that never answers is a timed-out attempt like a silent receiver.
 */
async function send(deps: AttemptDeps, row: Loaded, at: Date): Promise<SendResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), deps.timeoutMs);
  const timedOut = (): SendResult => ({
    kind: "failed",
    statusCode: null,
    error: `timeout after ${deps.timeoutMs} ms`,
  });
  try {
    const dest = await untilAborted(
      checkDestination(row.url, {
        resolveDns: deps.resolveDns,
        allowlist: deps.allowlist,
        literalCache: deps.literalCache,
      }),
      controller.signal,
    );
    if (!dest) return timedOut();
    if (!dest.ok) {
      if (dest.problem === "private_address")
        return { kind: "disable", statusCode: null, error: `destination ${dest.message}`, reason: "private_address" };
      return { kind: "failed", statusCode: null, error: `destination url ${dest.message}` };
    }
    let secrets: string[];
    try {
      secrets = [await deps.openSecret(row.secret_encrypted, row.subscription_id)];
      if (
        row.previous_secret_encrypted &&
        row.previous_secret_expires_at &&
        row.previous_secret_expires_at.getTime() > at.getTime()
      ) {
        secrets.push(await deps.openSecret(row.previous_secret_encrypted, row.subscription_id));
      }
    } catch (err) {
      if (!(err instanceof SecretUnreadableError)) throw err;
      // Recorded like any failed attempt (and retried): an operator who restores the key fixes it.
      deps.logger.error("webhook secret cannot be opened", {
        subscriptionId: row.subscription_id,
        deliveryId: row.id,
        err,
      });
      return { kind: "failed", statusCode: null, error: `webhook secret cannot be opened: ${err.message}` };
    }
    const res = await deps.fetch(
      dest.url.toString(),
      {
        method: "POST",
        headers: deliveryHeaders(secrets, row.id, at, row.body),
        body: row.body,
        redirect: "manual",
        signal: controller.signal,
      },
      { address: dest.address, hostname: dest.hostname },
    );
    await readPrefix(res, RESPONSE_PREFIX_BYTES);
    const code = res.status;
    if (code >= 200 && code < 300) return { kind: "delivered", statusCode: code };
    if (code >= 300 && code < 400)
      return { kind: "disable", statusCode: code, error: `redirect (${code}) not followed`, reason: "redirect" };
    if (code === 410) return { kind: "disable", statusCode: code, error: "endpoint gone (410)", reason: "gone" };
    const retryAfterMs = code === 429 || code === 408 ? parseRetryAfter(res.headers.get("retry-after"), at) : null;
    return { kind: "failed", statusCode: code, error: `HTTP ${code}`, retryAfterMs };
  } catch (err) {
    if (controller.signal.aborted) return timedOut();
    return { kind: "failed", statusCode: null, error: `connection failed: ${connectionErrorText(err)}` };
  } finally {
    clearTimeout(timer);
  }
}

/** `work`'s result, or undefined once `signal` aborts (the work itself is left to finish). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Reads at most `max` bytes of the answer, then cancels the rest: a receiver cannot hold the
 * attempt or the dispatcher's memory with a long or endless body. Nothing read is kept.
 */
async function readPrefix(res: Response, max: number): Promise<void> {
  if (!res.body) return;
  const reader = res.body.getReader();
  let read = 0;
  try {
    while (read < max) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
  } catch {
    return; // a broken answer after the status line changes nothing about the status
  }
  await reader.cancel().catch(() => {});
}

/**
 * The error's code or a short message, with IP literals removed: the attempt record is shown to
 * tenant admins, and the address a name resolved to (maybe internal) is not theirs to learn.
 */
function connectionErrorText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const text = typeof e?.code === "string" && e.code ? e.code : String(e?.message ?? err);
  return text.replace(/\[?[0-9a-fA-F]*:[0-9a-fA-F:.]+\]?|\b\d{1,3}(\.\d{1,3}){3}\b/g, "<address>").slice(0, 300);
}
