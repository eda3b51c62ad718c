import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { SecretBox } from "@cellar/shared/crypto";
import type { Logger } from "@cellar/shared/logger";
import type { Topology } from "@cellar/shared/nats/topology";
import { toCidrs } from "@cellar/shared/webhooks/address";
import { publishDeliveryJobs } from "@cellar/shared/webhooks/deliveries";
import { systemResolveDns } from "@cellar/shared/webhooks/destination";
import { recordSuccesses } from "@cellar/shared/webhooks/delivery-state";
import { attemptDelivery, type AttemptDeps, loadDeliveries, type Loaded, type Verdict } from "./attempt.ts";
import { createBatcher } from "./batcher.ts";
import { DEFAULT_CONCURRENCY, DEFAULT_ENDPOINT_CONCURRENCY, DEFAULT_TIMEOUT_MS, type DispatcherDeps } from "./deps.ts";
import { createFairness, TENANT_SHARE } from "./fairness.ts";
import { pinnedFetch } from "./pinned-fetch.ts";

/**
 * The dispatcher's infrastructure, built once from its deps with their defaults: Postgres (with
 * the batched row load and success record), NATS, the logger, the keyring, the clock and
 * randomness, fetch pinned to the checked address, DNS, the secret opener and the destination
 * rules. Behaviour (DispatchPieces below, delivery-attempts.ts, the evaluations runner, pruning)
 * reads its infrastructure from here and nowhere else.
 */
export interface DispatchResources {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  secretBox: SecretBox;
  /** What one attempt uses (attempt.ts). */
  attempt: AttemptDeps;
  now: () => Date;
  /** A delivery row with its subscription (undefined = gone); many loads share one query. */
  loadDelivery(id: string): Promise<Loaded | undefined>;
}

/**
 * Opens sealed subscription secrets, cached by (subscription, ciphertext) so a rotation is picked
 * up at once; a failure is not remembered (the keyring may be fixed). At most 10,000 entries.
 */
export function cachedSecretOpener(secretBox: SecretBox): (sealed: string, subscriptionId: string) => Promise<string> {
  const secrets = new Map<string, Promise<string>>();
  return (sealed, subscriptionId) => {
    if (secrets.size > 10_000) secrets.clear();
    const cacheKey = `${subscriptionId}|${sealed}`;
    let p = secrets.get(cacheKey);
    if (!p) {
      secrets.set(cacheKey, (p = secretBox.open(sealed, subscriptionId)));
      p.catch(() => secrets.delete(cacheKey)); // a failure is not remembered: the keyring may be fixed
    }
    return p;
  };
}

export function createDispatchResources(deps: DispatcherDeps): DispatchResources {
  const now = deps.now ?? (() => new Date());
  // Under load many attempts share one query; a lone attempt waits at most 2 ms.
  const batched = { maxSize: 200, maxWaitMs: 2 };
  return {
    sql: deps.sql,
    js: deps.js,
    topology: deps.topology,
    logger: deps.logger,
    secretBox: deps.secretBox,
    now,
    loadDelivery: createBatcher((ids: string[]) => loadDeliveries(deps.sql, ids), batched),
    attempt: {
      sql: deps.sql,
      logger: deps.logger,
      openSecret: cachedSecretOpener(deps.secretBox),
      recordSuccess: createBatcher((recs) => recordSuccesses(deps.sql, recs), batched),
      fetch: deps.fetch ?? pinnedFetch,
      resolveDns: deps.resolveDns ?? systemResolveDns,
      allowlist: toCidrs(deps.insecureAllowlist),
      literalCache: new Map(),
      now,
      retryTimeScale: deps.retryTimeScale ?? 1,
      timeoutMs: deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      random: deps.random ?? Math.random,
    },
  };
}

/**
 * What the delivery path (delivery-attempts.ts) and its two consumers share: the infrastructure
 * (`deps`, the DispatchResources; `now`, `attemptDeps` and `loadDelivery` are its parts) and the
 * behaviour built on it: the fairness caps, one attempt within them, and the retry job publisher.
 */
export interface DispatchPieces {
  /** The infrastructure: Postgres, NATS, the logger, the clock (DispatchResources). */
  deps: DispatchResources;
  now: () => Date;
  attemptDeps: AttemptDeps;
  /** Attempts in flight per process. */
  concurrency: number;
  /** A delivery row with its subscription (undefined = gone); many loads share one query. */
  loadDelivery(id: string): Promise<Loaded | undefined>;
  /** The destination host or the tenant already holds its share of slots (fairness.ts). */
  crowded(row: Loaded): boolean;
  /** One attempt (attempt.ts): its send within the destination host's, the tenant's and the process's caps, then its record. */
  attemptNow(row: Loaded, manual: boolean): Promise<Verdict>;
  /** Hands the delivery to DELIVERIES after attempt `afterAttempt` (its message id dedups a replay). */
  publishJob(deliveryId: string, tenantId: string, afterAttempt: number): Promise<void>;
}

export function createDispatchPieces(
  deps: DispatcherDeps,
  resources: DispatchResources = createDispatchResources(deps),
): DispatchPieces {
  const concurrency = deps.concurrency ?? DEFAULT_CONCURRENCY;
  const fairness = createFairness({
    concurrency,
    hostCap: deps.endpointConcurrency ?? DEFAULT_ENDPOINT_CONCURRENCY,
    tenantCap: deps.tenantConcurrency ?? Math.max(1, Math.floor(concurrency * TENANT_SHARE)),
  });
  const fairKey = (row: Loaded) => ({ tenantId: row.tenant_id, url: row.url });
  return {
    deps: resources,
    now: resources.now,
    attemptDeps: resources.attempt,
    concurrency,
    loadDelivery: resources.loadDelivery,
    crowded: (row) => fairness.crowded(fairKey(row)),
    async attemptNow(row, manual) {
      // The caps hold for the send; the record follows outside them (attemptDelivery).
      const verdict = await attemptDelivery(resources.attempt, row, manual, () => fairness.acquire(fairKey(row)));
      deps.onAttempt?.({ deliveryId: row.id, attempt: row.attempts + 1, verdict });
      if (verdict.action === "term")
        resources.logger.info("delivery finished without success", { deliveryId: row.id, reason: verdict.reason });
      return verdict;
    },
    publishJob: (deliveryId, tenantId, afterAttempt) =>
      publishDeliveryJobs(resources.js, resources.topology, [
        { job: { deliveryId, tenantId }, msgID: `${deliveryId}:a${afterAttempt}` },
      ]),
  };
}
