import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { SecretBox } from "@cellar/shared/crypto";
import type { Db } from "@cellar/shared/db/client";
import type { Logger } from "@cellar/shared/logger";
import type { Topology } from "@cellar/shared/nats/topology";
import { deliveriesStream, maturedStream } from "@cellar/shared/nats/catalogue";
import { consume, type ConsumeDeps, type ConsumeLoop, type Delivery, type Outcome } from "@cellar/shared/nats/consume";
import {
  isMonitorEvent,
  type DeliveryJob,
  type MaturedMessage,
  type MaturedStreamMessage,
} from "@cellar/shared/payloads";
import { toCidrs, type Cidr } from "@cellar/shared/webhooks/address";
import { publishDeliveryJobs } from "@cellar/shared/webhooks/deliveries";
import { systemResolveDns, type ResolveDns } from "@cellar/shared/webhooks/destination";
import { recordSuccesses } from "@cellar/shared/webhooks/delivery-state";
import {
  attemptDelivery,
  loadDeliveries,
  type AttemptDeps,
  type DeliveryFetch,
  type Loaded,
  type Verdict,
} from "./attempt.ts";
import { createBatcher } from "./batcher.ts";
import { eventKey, fanOut, type PendingDelivery } from "./fanout.ts";
import { fanOutMonitorEvent } from "./monitor-fanout.ts";
import { createFairness, crowdedDelayMs, TENANT_SHARE } from "./fairness.ts";
import { pinnedFetch } from "./pinned-fetch.ts";
import { pruneHistory, RETENTION_MS } from "./prune.ts";
import { MAX_RETRY_AFTER_MS } from "./retry.ts";

export interface DispatcherDeps {
  sql: postgres.Sql;
  /** Accepted for symmetry with the other apps; the dispatcher uses raw `sql` only. */
  db?: Db;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  secretBox: SecretBox;
  /** Defaults to a fetch pinned to the validated address (pinned-fetch.ts). */
  fetch?: DeliveryFetch;
  resolveDns?: ResolveDns;
  now?: () => Date;
  random?: () => number;
  /** WEBHOOK_RETRY_TIME_SCALE: multiplies every retry delay. */
  retryTimeScale?: number;
  /** WEBHOOK_TIMEOUT_SECONDS x 1000. */
  timeoutMs?: number;
  /** WEBHOOK_INSECURE_ALLOWLIST (comma-separated CIDRs) or parsed CIDRs. */
  insecureAllowlist?: string | string[] | Cidr[];
  /** Attempts in flight per process. */
  concurrency?: number;
  /** Attempts in flight per destination host per process (contract: platform-set). */
  endpointConcurrency?: number;
  /** Attempts in flight per tenant per process (default: TENANT_SHARE of `concurrency`). */
  tenantConcurrency?: number;
  pruneIntervalMs?: number;
  retentionMs?: number;
  /** Test and metrics hook: runs after each attempt is recorded. */
  onAttempt?: (info: { deliveryId: string; attempt: number; verdict: Verdict }) => void;
  /** Consume runtime overrides: failure policy (tests shorten backoffs), dead-letter hook. */
  consume?: Pick<ConsumeDeps, "policy" | "onDeadLetter">;
}

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_CONCURRENCY = 256;
export const DEFAULT_ENDPOINT_CONCURRENCY = 32;

/** MATURED -> delivery rows -> first attempt -> DELIVERIES for the retry curve; plus pruning. */
export function createDispatcher(deps: DispatcherDeps) {
  const now = deps.now ?? (() => new Date());
  const allowlist = toCidrs(deps.insecureAllowlist);
  const secrets = new Map<string, Promise<string>>();
  const openSecret = (sealed: string, subscriptionId: string) => {
    if (secrets.size > 10_000) secrets.clear();
    const cacheKey = `${subscriptionId}|${sealed}`;
    let p = secrets.get(cacheKey);
    if (!p) {
      secrets.set(cacheKey, (p = deps.secretBox.open(sealed, subscriptionId)));
      p.catch(() => secrets.delete(cacheKey)); // a failure is not remembered: the keyring may be fixed
    }
    return p;
  };
  // Under load many attempts share one query; a lone attempt waits at most 2 ms.
  const loadDelivery = createBatcher((ids: string[]) => loadDeliveries(deps.sql, ids), { maxSize: 200, maxWaitMs: 2 });
  const attemptDeps: AttemptDeps = {
    sql: deps.sql,
    logger: deps.logger,
    openSecret,
    recordSuccess: createBatcher((recs) => recordSuccesses(deps.sql, recs), { maxSize: 200, maxWaitMs: 2 }),
    fetch: deps.fetch ?? pinnedFetch,
    resolveDns: deps.resolveDns ?? systemResolveDns,
    allowlist,
    literalCache: new Map(),
    now,
    retryTimeScale: deps.retryTimeScale ?? 1,
    timeoutMs: deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    random: deps.random ?? Math.random,
  };
  const concurrency = deps.concurrency ?? DEFAULT_CONCURRENCY;
  const endpointCap = deps.endpointConcurrency ?? DEFAULT_ENDPOINT_CONCURRENCY;
  const fairness = createFairness({
    concurrency,
    hostCap: endpointCap,
    tenantCap: deps.tenantConcurrency ?? Math.max(1, Math.floor(concurrency * TENANT_SHARE)),
  });
  const loops: ConsumeLoop[] = [];
  let pruneTimer: ReturnType<typeof setInterval> | undefined;
  let pruning: Promise<unknown> = Promise.resolve();

  // Fan-out of many MATURED messages shares two queries (see fanout.ts).
  const fanOutBatched = createBatcher(
    async (events: MaturedMessage[]) => {
      const byEvent = new Map<string, PendingDelivery[]>();
      for (const p of await fanOut({ sql: deps.sql, now }, events))
        byEvent.set(p.eventKey, [...(byEvent.get(p.eventKey) ?? []), p]);
      // Two MATURED messages for one event (a replay) must not both attempt its deliveries.
      return events.map((e) => {
        const mine = byEvent.get(eventKey(e)) ?? [];
        byEvent.delete(eventKey(e));
        return mine;
      });
    },
    { maxSize: 200, maxWaitMs: 5 },
  );
  const publishJob = (deliveryId: string, tenantId: string, afterAttempt: number) =>
    publishDeliveryJobs(deps.js, deps.topology, [
      { job: { deliveryId, tenantId }, msgID: `${deliveryId}:a${afterAttempt}` },
    ]);
  const fairKey = (row: Loaded) => ({ tenantId: row.tenant_id, url: row.url });
  const crowded = (row: Loaded) => fairness.crowded(fairKey(row));

  /** One attempt within the destination host's, the tenant's and the process's caps (fairness.ts). */
  async function attemptNow(row: Loaded, manual: boolean): Promise<Verdict> {
    const release = await fairness.acquire(fairKey(row));
    try {
      const verdict = await attemptDelivery(attemptDeps, row, manual);
      deps.onAttempt?.({ deliveryId: row.id, attempt: row.attempts + 1, verdict });
      if (verdict.action === "term")
        deps.logger.info("delivery finished without success", { deliveryId: row.id, reason: verdict.reason });
      return verdict;
    } finally {
      release();
    }
  }

  /**
   * First attempts run right here, without a trip through DELIVERIES: most receivers answer 2xx
   * and then a delivery costs one row insert and one attempt record. A failed first attempt (or
   * a crowded endpoint) hands the delivery to DELIVERIES, whose consumer waits out
   * `next_attempt_at` and runs the retry curve. MATURED is acked only once every delivery is
   * attempted or handed on.
   */
  async function firstAttempt(d: PendingDelivery): Promise<void> {
    if (d.attempts > 0) return publishJob(d.id, d.tenantId, d.attempts); // replay after a crash mid-retry
    const row = d.row ?? (await loadDelivery(d.id));
    if (!row || row.status !== "pending") return;
    if (crowded(row)) return publishJob(d.id, row.tenant_id, 0);
    const verdict = await attemptNow(row, false);
    if (verdict.action === "nak") await publishJob(d.id, row.tenant_id, row.attempts + 1);
  }

  /**
   * Who finishes a delivery that already existed? A fresh MATURED message for an event that has
   * rows (a re-selected trace) owns nothing: those rows belong to the message that inserted
   * them, which is either done, still working (heartbeats keep it), or unacked and coming back.
   * A redelivered message (deliveryCount > 1) is that original after a crash or a nak, so it
   * takes over every pending row of its event; retry jobs it re-publishes carry the same
   * message id as the lost one would have, so the stream drops true duplicates.
   */
  async function handleMatured({ value: event, msg }: Delivery<MaturedStreamMessage>): Promise<Outcome> {
    // Fan-out is idempotent: a redelivery cannot make a second delivery.
    const takeOver = msg.info.deliveryCount > 1;
    const fanned = isMonitorEvent(event) ? fanOutMonitorEvent({ sql: deps.sql, now }, event) : fanOutBatched(event);
    const pending = (await fanned).filter((d) => d.fresh || takeOver);
    await Promise.all(pending.map(firstAttempt));
  }

  async function handleDelivery({ value: job, msg }: Delivery<DeliveryJob>): Promise<Outcome> {
    const row = await loadDelivery(job.deliveryId);
    if (!row) return { term: "delivery no longer exists" }; // subscription deleted or pruned
    if (row.status !== "pending") return "ack"; // a redelivered job already done
    // A job handed on after a failed first attempt arrives at once: wait out the curve.
    const wait =
      row.next_attempt_at && !job.manual
        ? Math.min(row.next_attempt_at.getTime() - now().getTime(), MAX_RETRY_AFTER_MS)
        : 0;
    if (wait > 0) return { retryInMs: wait };
    // A crowded endpoint should not hold every slot of this process: come back shortly.
    if (crowded(row)) return { retryInMs: crowdedDelayMs(msg.info.deliveryCount, attemptDeps.random) };
    const verdict = await attemptNow(row, job.manual === true);
    if (verdict.action === "ack") return "ack";
    if (verdict.action === "nak") return { retryInMs: verdict.delayMs };
    return { term: verdict.reason };
  }

  /**
   * A job of the consumer lanes replaced (published before lanes, on `deliveries.attempt`): moved
   * to its tenant's lane, where the retry curve goes on. Moving rather than attempting here lets
   * the retired consumer drain within one nak delay instead of a whole retry curve. The new
   * message id is derived from the old message's sequence: a crash between the publish and the
   * ack re-publishes a duplicate the stream drops.
   */
  async function moveRetiredJob({ value: job, msg }: Delivery<DeliveryJob>): Promise<Outcome> {
    const row = await loadDelivery(job.deliveryId);
    if (!row) return { term: "delivery no longer exists" };
    if (row.status !== "pending") return "ack";
    await publishDeliveryJobs(deps.js, deps.topology, [
      { job: { ...job, tenantId: row.tenant_id }, msgID: `${job.deliveryId}:lane:${msg.seq}` },
    ]);
  }

  const prune = () => {
    pruning = pruneHistory(deps.sql, now(), deps.retentionMs ?? RETENTION_MS)
      .then((n) => n && deps.logger.info("pruned webhook history", { deliveries: n }))
      .catch((err) => deps.logger.error("pruning failed", { err: err as Error }));
    return pruning;
  };

  return {
    async start() {
      const runtime: ConsumeDeps = { js: deps.js, topology: deps.topology, logger: deps.logger, ...deps.consume };
      // Unlike a batch at a time, a slow message never holds up the next ones; I/O is batched
      // across messages where it pays (createBatcher).
      // Tenant lanes (catalogue.ts): each lane holds at most a quarter of the in-flight budget and
      // a freed slot goes to the lane that waited longest, so one tenant's backlog in MATURED or
      // DELIVERIES delays only the tenants hashed to its lane.
      loops.push(consume(maturedStream, runtime, { each: { maxInFlight: 1000 }, handle: handleMatured }));
      loops.push(
        consume(deliveriesStream, runtime, {
          each: { maxInFlight: concurrency },
          handle: handleDelivery,
          retired: moveRetiredJob,
        }),
      );
      void prune();
      pruneTimer = setInterval(prune, deps.pruneIntervalMs ?? 3600_000);
    },
    /** Stops pulling, lets in-flight attempts finish (bounded by the receiver timeout). */
    async stop() {
      if (pruneTimer) clearInterval(pruneTimer);
      await Promise.all(loops.map((l) => l.stop()));
      await pruning;
    },
    /** Runs one pruning pass now (tests, admin). */
    prune,
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
