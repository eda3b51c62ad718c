import type postgres from "postgres";
import { SecretUnreadableError, type SecretBox } from "../crypto.ts";

export interface ReencryptResult {
  /** Sealed values looked at (current and previous secrets of every subscription). */
  checked: number;
  /** Values rewritten under the current key. */
  reencrypted: number;
  /** Subscriptions with a value no key in the ring opens: their deliveries fail until fixed. */
  unreadable: string[];
}

/**
 * Re-seals every webhook secret that is not under the keyring's current key (or predates key
 * ids), so a retired key can then be dropped from SECRET_ENCRYPTION_KEYS_PREVIOUS. Safe to run
 * while the apps serve: each row is rewritten only if its ciphertext is still the one read (a
 * concurrent rotation wins), and running it again finds nothing to do.
 */
export async function reencryptSecrets(sql: postgres.Sql, box: SecretBox): Promise<ReencryptResult> {
  const result: ReencryptResult = { checked: 0, reencrypted: 0, unreadable: [] };
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const rows = await sql<{ id: string; secret_encrypted: string; previous_secret_encrypted: string | null }[]>`
      select id, secret_encrypted, previous_secret_encrypted from webhook_subscriptions where id > ${after} order by id limit 500`;
    if (rows.length === 0) return result;
    after = rows[rows.length - 1].id;
    for (const row of rows) {
      for (const column of ["secret_encrypted", "previous_secret_encrypted"] as const) {
        const sealed = row[column];
        if (!sealed) continue;
        result.checked++;
        if (!(await box.needsReseal(sealed))) continue;
        let plain: string;
        try {
          plain = await box.open(sealed, row.id);
        } catch (err) {
          if (!(err instanceof SecretUnreadableError)) throw err;
          if (!result.unreadable.includes(row.id)) result.unreadable.push(row.id);
          continue;
        }
        const resealed = await box.seal(plain, row.id);
        const updated =
          await sql`update webhook_subscriptions set ${sql(column)} = ${resealed} where id = ${row.id} and ${sql(column)} = ${sealed}`;
        result.reencrypted += updated.count;
      }
    }
  }
}
