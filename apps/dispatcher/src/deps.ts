import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { SecretBox } from "@cellar/shared/crypto";
import type { Db } from "@cellar/shared/db/client";
import type { Logger } from "@cellar/shared/logger";
import type { Topology } from "@cellar/shared/nats/topology";
import type { ConsumeDeps } from "@cellar/shared/nats/consume";
import type { Cidr } from "@cellar/shared/webhooks/address";
import type { ResolveDns } from "@cellar/shared/webhooks/destination";
import type { PathOptions } from "./attempt.ts";
import type { EvaluationRunnerOptions } from "./evaluations/runner.ts";
import type { DeliveryFetch } from "./send.ts";

/** The dispatcher's deps: its infrastructure (resources.ts), the delivery path's caps (PathOptions), its options. */
export interface DispatcherDeps extends PathOptions {
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
  /** How long an attempt claim lasts (default: the timeout plus ATTEMPT_LEASE_MARGIN_MS; tests shorten it). */
  attemptLeaseMs?: number;
  /** WEBHOOK_INSECURE_ALLOWLIST (comma-separated CIDRs) or parsed CIDRs. */
  insecureAllowlist?: string | string[] | Cidr[];
  pruneIntervalMs?: number;
  retentionMs?: number;
  /** Online evaluations (docs/evaluations.md): judge timeout (EVALUATION_TIMEOUT_SECONDS x 1000) and runner options. */
  evaluations?: EvaluationRunnerOptions & { timeoutMs?: number };
  /** Consume runtime overrides: failure policy (tests shorten backoffs), dead-letter hook. */
  consume?: Pick<ConsumeDeps, "policy" | "onDeadLetter">;
}

export const DEFAULT_TIMEOUT_MS = 15_000;
