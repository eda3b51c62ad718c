import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { Logger } from "@cellar/shared/logger";
import type { Topology } from "@cellar/shared/nats/topology";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import type {
  AttemptClaim,
  ClaimResult,
  DeliveryStatus,
  StatusAfterFailure,
  SuccessRecord,
} from "@cellar/shared/webhooks/delivery-state";
import {
  createFairness,
  crowdedDelayMs,
  DEFAULT_CONCURRENCY,
  DEFAULT_ENDPOINT_CONCURRENCY,
  TENANT_SHARE,
} from "./fairness.ts";
import { MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, retryDelayForAttempt, RETRY_HORIZON_MS } from "./retry.ts";
import { send, type SendDeps, type SendResult, type SendTarget } from "./send.ts";

/**
 * The delivery path (docs/webhooks.md "Delivery"). One function, `attempt`, takes a delivery
 * wherever it comes from: a first attempt right after the fan-out (the MATURED consumer,
 * matured.ts), or a retry, a manual resend or a handed-on first attempt (the DELIVERIES
 * consumer, delivery-attempts.ts). Its stages follow one another in this file, as the path goes,
 * in the manner of Svix's worker:
 *
 *   prepare   the pending row, due now, its destination host and tenant not crowded;
 *   claim     the attempt claim on the row (delivery-state.ts): one attempt of a delivery at a
 *             time, across messages and processes; refused, the delivery comes back when the
 *             other attempt's claim ends;
 *   send      within the caps (send.ts): the destination re-checked, the stored body signed, POSTed;
 *   record    the attempt and the delivery's next status through the state machine
 *             (shared/webhooks/delivery-state.ts), and the subscription's health.
 *
 * Its one result is a Verdict. Each consumer maps it once at its edge: DELIVERIES to its
 * message's outcome (streamOutcome), MATURED to a retry job handed on (handOn). The receiver's
 * classified answer (send.ts's SendResult) is the record stage's input, never returned.
 */

/** One delivery to attempt. */
export interface DeliveryWork {
  deliveryId: string;
  /** The row when the caller has it already (a fresh fan-out): no load query. */
  row?: Loaded;
  /** The attempt claim the caller holds already (the fan-out's insert took it): no claim query. */
  leasedUntil?: Date;
  /** A manual resend: attempted at once, and final. */
  manual: boolean;
  /** How many times the stream has handed the message over (spreads out crowded retries). */
  deliveryCount: number;
}

/**
 * The one result of the delivery path: `ack` = nothing left to do (delivered, or done before);
 * `term` = finished without success; `nak` = try again in `delayMs`, after attempt
 * `afterAttempt` (filled in by `attempt`: the retry job's message id carries it).
 */
export type Verdict =
  | { action: "ack" }
  | { action: "term"; reason: string }
  | { action: "nak"; delayMs: number; afterAttempt?: number };

/** A delivery row with its subscription: what the path attempts. */
export interface Loaded extends SendTarget {
  tenant_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  /** When the delivery was created: its retries end within RETRY_HORIZON_MS of it. */
  created_at: Date;
}

/** What the send and record stages use. */
export interface AttemptDeps extends SendDeps {
  sql: postgres.Sql;
  /** Batched deliveryState.recordSuccesses. */
  recordSuccess: (rec: SuccessRecord) => Promise<void>;
  now: () => Date;
  retryTimeScale: number;
  random: () => number;
}

/** The infrastructure the path reads (resources.ts builds it, with more). */
export interface PathResources {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  now: () => Date;
  attempt: AttemptDeps;
  /** A delivery row with its subscription (undefined = gone); many loads share one query. */
  loadDelivery(id: string): Promise<Loaded | undefined>;
  /** deliveryState.claimAttempts, many claims sharing one statement. */
  claimAttempt(claim: AttemptClaim): Promise<ClaimResult>;
  /** deliveryState.releaseLeases: a claim given back by an attempt that did not start; many share one statement. */
  releaseLease(lease: { deliveryId: string; until: Date }): Promise<void>;
  /** How long an attempt claim lasts: longer than an attempt (its send timeout) and its record. */
  attemptLeaseMs: number;
}

/** An attempt claim lasts the send timeout plus this, for the DNS check and the record. */
export const ATTEMPT_LEASE_MARGIN_MS = 15_000;

/** The path's caps and its observer (DispatcherDeps carries them). */
export interface PathOptions {
  /** Attempts in flight per process. */
  concurrency?: number;
  /** Attempts in flight per destination host per process (contract: platform-set). */
  endpointConcurrency?: number;
  /** Attempts in flight per tenant per process (default: TENANT_SHARE of `concurrency`). */
  tenantConcurrency?: number;
  /** Test and metrics hook: runs after each attempt is recorded. */
  onAttempt?: (info: { deliveryId: string; attempt: number; verdict: Verdict }) => void;
}

/** The path's infrastructure and its caps (test/helpers/dispatch-pieces.ts fakes this shape). */
export interface DeliveryPath {
  resources: PathResources;
  /** Attempts in flight per process (the DELIVERIES consumer's budget). */
  concurrency: number;
  /** The destination host or the tenant already holds its share of slots (fairness.ts). */
  crowded(row: Loaded): boolean;
  /** Send, within the destination host's, the tenant's and the process's caps, then record. */
  attemptNow(row: Loaded, manual: boolean): Promise<Verdict>;
}

/** The path over `resources`, with this process's fairness caps (fairness.ts). */
export function createDeliveryPath(resources: PathResources, opts: PathOptions = {}): DeliveryPath {
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  const fairness = createFairness({
    concurrency,
    hostCap: opts.endpointConcurrency ?? DEFAULT_ENDPOINT_CONCURRENCY,
    tenantCap: opts.tenantConcurrency ?? Math.max(1, Math.floor(concurrency * TENANT_SHARE)),
  });
  const fairKey = (row: Loaded) => ({ tenantId: row.tenant_id, url: row.url });
  return {
    resources,
    concurrency,
    crowded: (row) => fairness.crowded(fairKey(row)),
    async attemptNow(row, manual) {
      const verdict = await attemptDelivery(resources.attempt, row, manual, () => fairness.acquire(fairKey(row)));
      opts.onAttempt?.({ deliveryId: row.id, attempt: row.attempts + 1, verdict });
      if (verdict.action === "term")
        resources.logger.info("delivery finished without success", { deliveryId: row.id, reason: verdict.reason });
      return verdict;
    },
  };
}

/**
 * The delivery path: prepare, claim, then send and record (one attempt). A nak says after which
 * attempt. A claim the caller held for an attempt that does not start now (crowded) is given
 * back, so the retry job it becomes can take it at once.
 */
export async function attempt(path: DeliveryPath, work: DeliveryWork): Promise<Verdict> {
  const ready = await prepare(path, work);
  if (!("id" in ready)) {
    if (work.leasedUntil && ready.action === "nak")
      await path.resources.releaseLease({ deliveryId: work.deliveryId, until: work.leasedUntil });
    return ready;
  }
  const refused = work.leasedUntil ? undefined : await claim(path, ready);
  if (refused) return refused;
  const verdict = await path.attemptNow(ready, work.manual);
  return verdict.action === "nak" ? { ...verdict, afterAttempt: ready.attempts + 1 } : verdict;
}

/**
 * Stage 2, the attempt claim (deliveryState.claimAttempts): undefined when this attempt may go
 * ahead. Refused (another message or process is attempting the delivery, or the row moved on
 * since it was read), the delivery comes back when the other claim ends, or at once to be read
 * again; handed on, it carries the id of the attempt in hand (`afterAttempt`), the id its holder
 * hands a failure on under, so the stream keeps one of the two jobs.
 */
async function claim(path: DeliveryPath, row: Loaded): Promise<Verdict | undefined> {
  const { now, attemptLeaseMs, claimAttempt } = path.resources;
  const at = now();
  const until = new Date(at.getTime() + attemptLeaseMs);
  const result = await claimAttempt({ deliveryId: row.id, attempts: row.attempts, until, now: at });
  if (result.claimed) return undefined;
  const delayMs = result.heldUntil ? Math.max(1, result.heldUntil.getTime() - at.getTime()) : 1;
  return { action: "nak", delayMs, afterAttempt: row.attempts + 1 };
}

/**
 * Stage 1: the pending row, due now and not crowded. A row whose next attempt has not come
 * (a job handed on after a failed first attempt arrives at once) waits it out, at most the
 * longest Retry-After at a time; a crowded destination or tenant should not hold every slot of
 * this process, so the delivery comes back shortly. A manual resend does not wait.
 */
async function prepare(path: DeliveryPath, work: DeliveryWork): Promise<Loaded | Verdict> {
  const row = await pendingRow(path, work);
  if (!("id" in row)) return row;
  const { now, attempt: a } = path.resources;
  const due = row.next_attempt_at && !work.manual ? row.next_attempt_at.getTime() - now().getTime() : 0;
  if (due > 0) return { action: "nak", delayMs: Math.min(due, MAX_RETRY_AFTER_MS), afterAttempt: row.attempts };
  if (path.crowded(row))
    return { action: "nak", delayMs: crowdedDelayMs(work.deliveryCount, a.random), afterAttempt: row.attempts };
  return row;
}

/**
 * The delivery's row while it is still pending: `term` when it is gone (subscription deleted or
 * pruned), `ack` when it is finished already (a redelivered job, a replayed event).
 */
export async function pendingRow(path: DeliveryPath, work: Pick<DeliveryWork, "deliveryId" | "row">) {
  const row = work.row ?? (await path.resources.loadDelivery(work.deliveryId));
  if (!row) return { action: "term", reason: "delivery no longer exists" } as const;
  if (row.status !== "pending") return { action: "ack" } as const;
  return row;
}

/** Waits for the right to contact the destination; returns its release (fairness.ts). */
export type Slot = () => Promise<() => void>;
const noSlot: Slot = async () => () => {};

/**
 * Stages 3 and 4, one attempt of a prepared and claimed delivery: `send` (send.ts: re-validates the
 * destination, signs the stored body, POSTs it, classifies the answer) and `record` (the
 * attempt, the delivery's next status and the subscription's health). `slot` is held for the
 * send only: it caps what a destination and a
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

/** Failures for this long without one success disable the subscription (contract: Limits). */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;

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
): { verdict: Verdict; status: StatusAfterFailure; nextAttemptAt: Date | null } {
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
