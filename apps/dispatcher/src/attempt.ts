import type postgres from "postgres";
import type { SecretBox } from "../../../shared/crypto";
import type { Logger } from "../../../shared/logger";
import type { Cidr } from "../../../shared/webhooks/address";
import { checkDestination, type ResolveDns } from "../../../shared/webhooks/destination";
import { deliveryHeaders } from "../../../shared/webhooks/signing";
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
  secretBox: SecretBox;
  fetch: DeliveryFetch;
  resolveDns: ResolveDns;
  allowlist: Cidr[];
  now: () => Date;
  retryTimeScale: number;
  timeoutMs: number;
  random: () => number;
}

/** What to do with the DELIVERIES message afterwards. */
export type Verdict = { action: "ack" } | { action: "term"; reason: string } | { action: "nak"; delayMs: number };

/** Failures for this long without one success disable the subscription (contract: Limits). */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;

interface Loaded {
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
}

export async function loadDelivery(sql: postgres.Sql, deliveryId: string): Promise<Loaded | undefined> {
  const [row] = await sql<Loaded[]>`
    select d.id, d.body, d.status, d.attempts, d.subscription_id, s.url, s.enabled, s.secret_encrypted,
      s.previous_secret_encrypted, s.previous_secret_expires_at
    from webhook_deliveries d join webhook_subscriptions s on s.id = d.subscription_id
    where d.id = ${deliveryId}`;
  return row;
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

  const error = outcome.kind === "delivered" ? null : outcome.error;
  const statusCode = outcome.statusCode;
  await deps.sql.begin(async (tx) => {
    await tx`insert into webhook_attempts (delivery_id, subscription_id, attempt, status_code, duration_ms, error, attempted_at)
      values (${row.id}, ${row.subscription_id}, ${attempt}, ${statusCode}, ${durationMs}, ${error}, ${startedAt})
      on conflict (delivery_id, attempt) do nothing`;
    await tx`update webhook_deliveries set status = ${deliveryStatus}, attempts = ${attempt}, next_attempt_at = ${nextAttemptAt} where id = ${row.id}`;
    if (outcome.kind === "delivered") {
      await tx`update webhook_subscriptions set consecutive_failures = 0, failing_since = null, last_delivery_status = 'delivered'
        where id = ${row.subscription_id}`;
      return;
    }
    const [sub] = await tx<{ failing_since: Date }[]>`
      update webhook_subscriptions set consecutive_failures = consecutive_failures + 1,
        failing_since = coalesce(failing_since, ${startedAt}), last_delivery_status = 'failed'
      where id = ${row.subscription_id} returning failing_since`;
    let disableReason = outcome.kind === "disable" ? outcome.reason : null;
    if (!disableReason && sub && startedAt.getTime() - sub.failing_since.getTime() >= FAILING_DISABLE_MS) disableReason = "failing";
    if (disableReason) {
      await tx`update webhook_subscriptions set enabled = false, disabled_reason = ${disableReason}, updated_at = ${startedAt}
        where id = ${row.subscription_id} and enabled`;
      if (deliveryStatus === "pending") await tx`update webhook_deliveries set status = 'stopped', next_attempt_at = null where id = ${row.id}`;
      if (verdict.action === "nak") verdict = { action: "term", reason: `subscription disabled: ${disableReason}` };
    }
  });
  return verdict;
}

async function send(deps: AttemptDeps, row: Loaded, at: Date): Promise<Outcome> {
  const dest = await checkDestination(row.url, { resolveDns: deps.resolveDns, allowlist: deps.allowlist });
  if (!dest.ok) {
    if (dest.problem === "private_address") return { kind: "disable", statusCode: null, error: `destination ${dest.message}`, reason: "private_address" };
    return { kind: "failed", statusCode: null, error: `destination url ${dest.message}` };
  }
  const secrets = [await deps.secretBox.open(row.secret_encrypted)];
  if (row.previous_secret_encrypted && row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > at.getTime()) {
    secrets.push(await deps.secretBox.open(row.previous_secret_encrypted));
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), deps.timeoutMs);
  try {
    const res = await deps.fetch(
      dest.url.toString(),
      { method: "POST", headers: deliveryHeaders(secrets, row.id, at, row.body), body: row.body, redirect: "manual", signal: controller.signal },
      { address: dest.address, hostname: dest.hostname },
    );
    // Drain (bounded by the same timeout) so the connection can be reused; the body is not kept.
    await res.arrayBuffer().catch(() => undefined);
    const code = res.status;
    if (code >= 200 && code < 300) return { kind: "delivered", statusCode: code };
    if (code >= 300 && code < 400) return { kind: "disable", statusCode: code, error: `redirect (${code}) not followed`, reason: "redirect" };
    if (code === 410) return { kind: "disable", statusCode: code, error: "endpoint gone (410)", reason: "gone" };
    const retryAfterMs = code === 429 || code === 408 ? parseRetryAfter(res.headers.get("retry-after"), at) : null;
    return { kind: "failed", statusCode: code, error: `HTTP ${code}`, retryAfterMs };
  } catch (err) {
    if (controller.signal.aborted) return { kind: "failed", statusCode: null, error: `timeout after ${deps.timeoutMs} ms` };
    return { kind: "failed", statusCode: null, error: `connection failed: ${(err as Error).message ?? String(err)}`.slice(0, 500) };
  } finally {
    clearTimeout(timer);
  }
}
