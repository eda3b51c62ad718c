import type postgres from "postgres";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { DELIVERY_JOB_LIFETIME_MS } from "./retry.ts";

/** Delivery history, and with it the dedup record, is kept 30 days (contract: Limits). */
export const RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * One housekeeping pass: pending deliveries whose retry job the DELIVERIES stream has dropped
 * are failed (reconcile), then history past the retention window is deleted.
 */
export async function pruneHistory(sql: postgres.Sql, now: Date, retentionMs = RETENTION_MS): Promise<number> {
  await deliveryState.reconcileOrphans(sql, new Date(now.getTime() - DELIVERY_JOB_LIFETIME_MS));
  return deliveryState.prune(sql, new Date(now.getTime() - retentionMs));
}
