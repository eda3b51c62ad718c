import type { JsMsg } from "@nats-io/jetstream";
import { createLogger } from "@cellar/shared/logger";
import { createTopology } from "@cellar/shared/nats/topology";
import type { Loaded, Verdict } from "../../apps/dispatcher/src/attempt.ts";
import type { DeliveryPath } from "../../apps/dispatcher/src/attempt.ts";

/**
 * Test-only: the delivery path with its outside world replaced by records: the database (`rows`,
 * the attempt claims `refused`, the claims given back `released`), the caps (`crowded`), the send and record stages (`verdict`) and NATS (`published`; the retry
 * jobs handed to DELIVERIES, read from their message ids, are `jobs`).
 */
export function fakePieces(
  opts: {
    rows?: Record<string, Loaded>;
    crowded?: boolean;
    verdict?: Verdict;
    now?: Date;
    refused?: Record<string, Date | null>;
  } = {},
) {
  const released: Array<{ deliveryId: string; until: Date }> = [];
  const attempted: Array<{ id: string; manual: boolean }> = [];
  const jobs: Array<{ deliveryId: string; tenantId: string; afterAttempt: number }> = [];
  const published: Array<{ subject: string; body: unknown; msgID?: string }> = [];
  const now = () => opts.now ?? new Date("2026-11-21T10:00:00Z");
  const js = {
    publish: async (subject: string, data: string, o: { msgID?: string }) => {
      const body = JSON.parse(data);
      const handedOn = /:a(\d+)$/.exec(o.msgID ?? "");
      if (handedOn)
        jobs.push({ deliveryId: body.deliveryId, tenantId: body.tenantId, afterAttempt: Number(handedOn[1]) });
      else published.push({ subject, body, msgID: o.msgID });
      return { seq: published.length + jobs.length };
    },
  };
  const pieces = {
    resources: {
      js,
      topology: createTopology("fake"),
      logger: createLogger("silent"),
      now,
      attempt: { random: () => 0.5 },
      loadDelivery: async (id: string) => opts.rows?.[id],
      // Every claim is granted unless `refused` names the delivery (its claim held until then).
      claimAttempt: async (c: { deliveryId: string }) =>
        opts.refused && c.deliveryId in opts.refused
          ? { claimed: false, heldUntil: opts.refused[c.deliveryId] }
          : { claimed: true },
      releaseLease: async (lease: { deliveryId: string; until: Date }) => {
        released.push(lease);
      },
      attemptLeaseMs: 30_000,
    },
    concurrency: 8,
    crowded: () => opts.crowded ?? false,
    async attemptNow(row: Loaded, manual: boolean) {
      attempted.push({ id: row.id, manual });
      return opts.verdict ?? { action: "ack" };
    },
  } as unknown as DeliveryPath;
  return { pieces, attempted, jobs, published, released };
}

export function row(id: string, over: Partial<Loaded> = {}): Loaded {
  return {
    id,
    tenant_id: "tenant-1",
    body: "{}",
    status: "pending",
    attempts: 0,
    subscription_id: "sub-1",
    url: "https://hooks.example.com/x",
    enabled: true,
    secret_encrypted: "sealed",
    previous_secret_encrypted: null,
    previous_secret_expires_at: null,
    next_attempt_at: null,
    created_at: new Date("2026-11-21T09:59:00Z"),
    ...over,
  };
}

export const msgWith = (deliveryCount: number, seq = 1) => ({ seq, info: { deliveryCount } }) as unknown as JsMsg;
