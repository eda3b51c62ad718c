import { SecretUnreadableError } from "@cellar/shared/crypto";
import type { Logger } from "@cellar/shared/logger";
import type { Cidr } from "@cellar/shared/webhooks/address";
import { checkDestination, type DestinationCheck, type ResolveDns } from "@cellar/shared/webhooks/destination";
import type { SubscriptionTarget } from "@cellar/shared/webhooks/delivery-state";
import { deliveryHeaders } from "@cellar/shared/webhooks/signing";
import { parseRetryAfter } from "./retry.ts";

/**
 * The delivery path's send stage (attempt.ts runs it): re-validates the destination, signs the
 * stored body, POSTs it to the validated address and classifies the answer. Expected receiver
 * behaviour (410, timeouts, a secret no key opens) is data here, never an exception.
 */

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

/** What the send stage uses. */
export interface SendDeps {
  logger: Logger;
  /**
   * Decrypts a sealed secret with its subscription id as associated data (cached by ciphertext,
   * so a rotation is picked up at once); throws SecretUnreadableError when no key opens it.
   */
  openSecret: (sealed: string, subscriptionId: string) => Promise<string>;
  fetch: DeliveryFetch;
  resolveDns: ResolveDns;
  allowlist: Cidr[];
  /** Verdicts for URLs whose host is an IP literal: no DNS involved, so they cannot change. */
  literalCache?: Map<string, DestinationCheck>;
  timeoutMs: number;
}

/** What is sent: the delivery's stored body and id, to its subscription's URL with its secrets. */
export interface SendTarget extends SubscriptionTarget {
  id: string;
  body: string;
}

/** The receiver's answer (or its absence) classified: the input of the record stage. */
export type SendResult =
  | { kind: "delivered"; statusCode: number }
  | { kind: "failed"; statusCode: number | null; error: string; retryAfterMs?: number | null }
  | { kind: "disable"; statusCode: number | null; error: string; reason: string };

/** How much of a receiver's answer is read (raw bytes, never inflated); the rest is cancelled. */
export const RESPONSE_PREFIX_BYTES = 4 * 1024;

/**
 * Everything an attempt waits on (DNS, connect, the answer's prefix) runs under one deadline of
 * `timeoutMs`, so a resolver that never answers is a timed-out attempt like a silent receiver.
 */
export async function send(deps: SendDeps, row: SendTarget, at: Date): Promise<SendResult> {
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
