import type postgres from "postgres";
import { SecretUnreadableError } from "@cellar/shared/crypto";
import type { Logger } from "@cellar/shared/logger";
import type { Cidr } from "@cellar/shared/webhooks/address";
import { checkDestination, type DestinationCheck, type ResolveDns } from "@cellar/shared/webhooks/destination";
import { deliveryHeaders } from "@cellar/shared/webhooks/signing";
import { MAX_ATTEMPTS, parseRetryAfter, retryDelayForAttempt } from "./retry";

/**
 * Sends one request to the validated `address` only (never a fresh DNS lookup) and must not
 * follow redirects. Production pins the connection to the address; tests pass global fetch,
 * which msw intercepts.
 */
export type DeliveryFetch = (url: string, init: RequestInit & { redirect: "manual" }, target: { address: string; hostname: string }) => Promise<Response>;

export interface AttemptDeps {
  sql: postgres.Sql;
  logger: Logger;
  /**
   * Decrypts a sealed secret with its subscription id as associated data (cached by ciphertext,
   * so a rotation is picked up at once); throws SecretUnreadableError when no key opens it.
   */
  openSecret: (sealed: string, subscriptionId: string) => Promise<string>;
  /** Batched recordSuccesses. */
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

/** What to do with the DELIVERIES message afterwards. */
export type Verdict = { action: "ack" } | { action: "term"; reason: string } | { action: "nak"; delayMs: number };

/** Failures for this long without one success disable the subscription (contract: Limits). */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;

export interface Loaded {
  id: string;
  body: string;
  status: string;
  attempts: number;
  subscription_id: string;
  url: string;
  enabled: boolean;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  next_attempt_at: Date | null;
}

/** Delivery rows with their subscription, in the order of `ids` (undefined = gone). */
export async function loadDeliveries(sql: postgres.Sql, ids: string[]): Promise<Array<Loaded | undefined>> {
  const rows = await sql<Loaded[]>`
    select d.id, d.body, d.status, d.attempts, d.next_attempt_at, d.subscription_id, s.url, s.enabled, s.secret_encrypted,
      s.previous_secret_encrypted, s.previous_secret_expires_at
    from webhook_deliveries d join webhook_subscriptions s on s.id = d.subscription_id
    where d.id = any(${ids}::text[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id));
}

export interface SuccessRecord {
  deliveryId: string;
  subscriptionId: string;
  attempt: number;
  statusCode: number;
  durationMs: number;
  attemptedAt: Date;
}

/**
 * Records successful attempts in one statement for many deliveries (the hot path under load):
 * attempt rows, delivered state, and health reset only where health actually changes.
 */
export async function recordSuccesses(sql: postgres.Sql, recs: SuccessRecord[]): Promise<void[]> {
  await sql`
    with v as (
      select * from unnest(${recs.map((r) => r.deliveryId)}::text[], ${recs.map((r) => r.subscriptionId)}::uuid[], ${recs.map((r) => r.attempt)}::int[],
        ${recs.map((r) => r.statusCode)}::int[], ${recs.map((r) => r.durationMs)}::int[], ${recs.map((r) => r.attemptedAt.toISOString())}::timestamptz[])
        as v(delivery_id, subscription_id, attempt, status_code, duration_ms, attempted_at)
    ), ins as (
      -- A delivery deleted meanwhile (its subscription was deleted) has nothing left to record.
      insert into webhook_attempts (delivery_id, subscription_id, attempt, status_code, duration_ms, attempted_at)
      select v.delivery_id, v.subscription_id, v.attempt, v.status_code, v.duration_ms, v.attempted_at
      from v join webhook_deliveries d on d.id = v.delivery_id
      on conflict (delivery_id, attempt) do nothing
    ), upd as (
      update webhook_deliveries d set status = 'delivered', attempts = v.attempt, next_attempt_at = null from v where d.id = v.delivery_id
    )
    update webhook_subscriptions s set consecutive_failures = 0, failing_since = null, last_delivery_status = 'delivered'
    where s.id in (select subscription_id from v)
      and (s.consecutive_failures <> 0 or s.failing_since is not null or s.last_delivery_status is distinct from 'delivered')`;
  return recs.map(() => undefined);
}

type Outcome =
  | { kind: "delivered"; statusCode: number }
  | { kind: "failed"; statusCode: number | null; error: string; retryAfterMs?: number | null }
  | { kind: "disable"; statusCode: number | null; error: string; reason: string };

/**
 * One attempt of one delivery: re-validates the destination, signs the stored body, POSTs it,
 * records the attempt and the subscription's health, and says whether and when to retry.
 * Expected receiver behaviour (410, timeouts) is data here, never an exception.
 */
export async function attemptDelivery(deps: AttemptDeps, row: Loaded, manual: boolean): Promise<Verdict> {
  if (!row.enabled) {
    await deps.sql`update webhook_deliveries set status = 'stopped', next_attempt_at = null where id = ${row.id} and status = 'pending'`;
    return { action: "term", reason: "subscription disabled" };
  }
  const attempt = row.attempts + 1;
  const startedAt = deps.now();
  const t0 = performance.now();
  const outcome = await send(deps, row, startedAt);
  const durationMs = Math.round(performance.now() - t0);
  const final = manual || attempt >= MAX_ATTEMPTS;

  let verdict: Verdict;
  let deliveryStatus: "delivered" | "pending" | "failed" | "stopped";
  let nextAttemptAt: Date | null = null;
  if (outcome.kind === "delivered") {
    verdict = { action: "ack" };
    deliveryStatus = "delivered";
  } else if (outcome.kind === "disable") {
    verdict = { action: "term", reason: outcome.reason };
    deliveryStatus = "stopped";
  } else if (final) {
    verdict = { action: "term", reason: manual ? "manual attempt failed" : "last attempt failed" };
    deliveryStatus = "failed";
  } else {
    const curve = retryDelayForAttempt(attempt + 1, deps.retryTimeScale, deps.random);
    // Retry-After moves the next attempt later, never earlier (contract: Delivery rules 8).
    const delayMs = Math.max(curve, outcome.retryAfterMs ?? 0);
    verdict = { action: "nak", delayMs };
    deliveryStatus = "pending";
    nextAttemptAt = new Date(startedAt.getTime() + delayMs);
  }

  if (outcome.kind === "delivered") {
    await deps.recordSuccess({ deliveryId: row.id, subscriptionId: row.subscription_id, attempt, statusCode: outcome.statusCode, durationMs, attemptedAt: startedAt });
    return verdict;
  }
  const { error, statusCode } = outcome;
  // One statement (data-modifying CTEs run atomically): attempt row, delivery state, health.
  const [sub] = await deps.sql<{ failing_since: Date | null }[]>`
    with attempt as (
      insert into webhook_attempts (delivery_id, subscription_id, attempt, status_code, duration_ms, error, attempted_at)
      values (${row.id}, ${row.subscription_id}, ${attempt}, ${statusCode}, ${durationMs}, ${error}, ${startedAt})
      on conflict (delivery_id, attempt) do nothing
    ), delivery as (
      update webhook_deliveries set status = ${deliveryStatus}, attempts = ${attempt}, next_attempt_at = ${nextAttemptAt} where id = ${row.id}
    )
    update webhook_subscriptions set consecutive_failures = consecutive_failures + 1,
      failing_since = coalesce(failing_since, ${startedAt}), last_delivery_status = 'failed'
    where id = ${row.subscription_id} returning failing_since`;

  let disableReason = outcome.kind === "disable" ? outcome.reason : null;
  if (!disableReason && sub?.failing_since && startedAt.getTime() - sub.failing_since.getTime() >= FAILING_DISABLE_MS) disableReason = "failing";
  if (disableReason) {
    await deps.sql`
      with sub as (
        update webhook_subscriptions set enabled = false, disabled_reason = ${disableReason}, updated_at = ${startedAt}
        where id = ${row.subscription_id} and enabled
      )
      update webhook_deliveries set status = 'stopped', next_attempt_at = null where id = ${row.id} and status = 'pending'`;
    if (verdict.action === "nak") verdict = { action: "term", reason: `subscription disabled: ${disableReason}` };
  }
  return verdict;
}

/** How much of a receiver's answer is read (raw bytes, never inflated); the rest is cancelled. */
export const RESPONSE_PREFIX_BYTES = 4 * 1024;

/**
 * Everything an attempt waits on (DNS, connect, the answer's prefix) runs under one deadline of
 * `timeoutMs`, so a resolver that never answers is a timed-out attempt like a silent receiver.
 */
async function send(deps: AttemptDeps, row: Loaded, at: Date): Promise<Outcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), deps.timeoutMs);
  const timedOut = (): Outcome => ({ kind: "failed", statusCode: null, error: `timeout after ${deps.timeoutMs} ms` });
  try {
    const dest = await untilAborted(checkDestination(row.url, { resolveDns: deps.resolveDns, allowlist: deps.allowlist, literalCache: deps.literalCache }), controller.signal);
    if (!dest) return timedOut();
    if (!dest.ok) {
      if (dest.problem === "private_address") return { kind: "disable", statusCode: null, error: `destination ${dest.message}`, reason: "private_address" };
      return { kind: "failed", statusCode: null, error: `destination url ${dest.message}` };
    }
    let secrets: string[];
    try {
      secrets = [await deps.openSecret(row.secret_encrypted, row.subscription_id)];
      if (row.previous_secret_encrypted && row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > at.getTime()) {
        secrets.push(await deps.openSecret(row.previous_secret_encrypted, row.subscription_id));
      }
    } catch (err) {
      if (!(err instanceof SecretUnreadableError)) throw err;
      // Recorded like any failed attempt (and retried): an operator who restores the key fixes it.
      deps.logger.error("webhook secret cannot be opened", { subscriptionId: row.subscription_id, deliveryId: row.id, err });
      return { kind: "failed", statusCode: null, error: `webhook secret cannot be opened: ${err.message}` };
    }
    const res = await deps.fetch(
      dest.url.toString(),
      { method: "POST", headers: deliveryHeaders(secrets, row.id, at, row.body), body: row.body, redirect: "manual", signal: controller.signal },
      { address: dest.address, hostname: dest.hostname },
    );
    await readPrefix(res, RESPONSE_PREFIX_BYTES);
    const code = res.status;
    if (code >= 200 && code < 300) return { kind: "delivered", statusCode: code };
    if (code >= 300 && code < 400) return { kind: "disable", statusCode: code, error: `redirect (${code}) not followed`, reason: "redirect" };
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
