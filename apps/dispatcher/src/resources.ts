import type postgres from "postgres";
import type { SecretBox } from "@cellar/shared/crypto";
import { toCidrs } from "@cellar/shared/webhooks/address";
import { systemResolveDns } from "@cellar/shared/webhooks/destination";
import { claimAttempts, recordSuccesses, releaseLeases } from "@cellar/shared/webhooks/delivery-state";
import { ATTEMPT_LEASE_MARGIN_MS, type Loaded, type PathResources } from "./attempt.ts";
import { createBatcher } from "./batcher.ts";
import { DEFAULT_TIMEOUT_MS, type DispatcherDeps } from "./deps.ts";
import { pinnedFetch } from "./pinned-fetch.ts";

/**
 * The dispatcher's infrastructure, built once from its deps with their defaults: Postgres (with
 * the batched row load and success record), NATS, the logger, the keyring, the clock and
 * randomness, fetch pinned to the checked address, DNS, the secret opener and the destination
 * rules. Behaviour (the delivery path in attempt.ts, the evaluations runner, pruning) reads its
 * infrastructure from here and nowhere else.
 */
export interface DispatchResources extends PathResources {
  secretBox: SecretBox;
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

/** How long a success record waits for others to share its statement. */
export const RECORD_WAIT_MS = 10;

export function createDispatchResources(deps: DispatcherDeps): DispatchResources {
  const now = deps.now ?? (() => new Date());
  // Under load many attempts share one query; a lone attempt waits at most 2 ms for its row.
  const batched = { maxSize: 200, maxWaitMs: 2 };
  // A success is recorded after its POST, so waiting costs no delivery time, only the ack's. A
  // fan-out batch's POSTs finish in waves (32 at once per host): 2 ms caught about 27 records a
  // statement in figure 3, 10 ms catches a batch's waves in one (each statement costs the
  // dispatcher a socket write and a Postgres round of its own: docs/performance-journal.md).
  const recorded = { maxSize: 200, maxWaitMs: RECORD_WAIT_MS };
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    sql: deps.sql,
    js: deps.js,
    topology: deps.topology,
    logger: deps.logger,
    secretBox: deps.secretBox,
    now,
    loadDelivery: createBatcher((ids: string[]) => loadDeliveries(deps.sql, ids), batched),
    // Fresh fan-outs come claimed by their insert: only retries, hand-ons and take-overs claim here.
    claimAttempt: createBatcher((claims) => claimAttempts(deps.sql, claims), batched),
    // A burst of crowded first attempts (a slow destination) gives its claims back together.
    releaseLease: createBatcher((leases) => releaseLeases(deps.sql, leases), batched),
    attemptLeaseMs: deps.attemptLeaseMs ?? timeoutMs + ATTEMPT_LEASE_MARGIN_MS,
    attempt: {
      sql: deps.sql,
      logger: deps.logger,
      openSecret: cachedSecretOpener(deps.secretBox),
      recordSuccess: createBatcher((recs) => recordSuccesses(deps.sql, recs), recorded),
      fetch: deps.fetch ?? pinnedFetch,
      resolveDns: deps.resolveDns ?? systemResolveDns,
      allowlist: toCidrs(deps.insecureAllowlist),
      literalCache: new Map(),
      now,
      retryTimeScale: deps.retryTimeScale ?? 1,
      timeoutMs,
      random: deps.random ?? Math.random,
    },
  };
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
