import type { JetStreamClient } from "@nats-io/jetstream";
import type { SecretBox } from "@cellar/shared/crypto";
import type { Topology } from "@cellar/shared/nats/topology";
import type { Cidr } from "@cellar/shared/webhooks/address";
import type { ResolveDns } from "@cellar/shared/webhooks/destination";

/** Optional platform deps for webhook management (all have safe defaults except secretBox). */
export interface WebhookOptions {
  /** Seals signing secrets (SECRET_ENCRYPTION_KEY). Without it create and rotate answer 503. */
  secretBox?: SecretBox;
  resolveDns?: ResolveDns;
  /** WEBHOOK_INSECURE_ALLOWLIST. */
  insecureAllowlist?: string | string[] | Cidr[];
  now?: () => Date;
  /** Needed by POST /webhooks/:id/test and .../retry (they publish to DELIVERIES). */
  js?: JetStreamClient;
  topology?: Topology;
}
