import type postgres from "postgres";

/** Delivery history, and with it the dedup record, is kept 30 days (contract: Limits). */
export const RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * Deletes deliveries (their attempts cascade) created before the retention window. No status
 * filter: the retry curve ends after ~52 hours, so anything this old is finished or stuck.
 */
export async function pruneHistory(sql: postgres.Sql, now: Date, retentionMs = RETENTION_MS): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  let total = 0;
  // Small batches keep each transaction short on a big table.
  for (;;) {
    const rows = await sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries where created_at < ${cutoff} limit 5000)
      returning 1`;
    total += rows.length;
    if (rows.length < 5000) return total;
  }
}
