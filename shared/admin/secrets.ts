import type postgres from "postgres";
import { SecretUnreadableError, type SecretBox } from "../crypto.ts";

export interface ReencryptResult {
  /** Sealed values looked at (current and previous secrets of every subscription, evaluators' judge keys). */
  checked: number;
  /** Values rewritten under the current key. */
  reencrypted: number;
  /**
   * Subscriptions (and evaluators, as `evaluator:<id>`) with a value no key in the ring opens:
   * their deliveries (judge calls) fail until fixed.
   */
  unreadable: string[];
}

/**
 * Re-seals every webhook secret and evaluator judge key (docs/evaluations.md) that is not under the keyring's current key (or predates key
 * ids), so a retired key can then be dropped from SECRET_ENCRYPTION_KEYS_PREVIOUS. Safe to run
 * while the apps serve: each row is rewritten only if its ciphertext is still the one read (a
 * concurrent rotation wins), and running it again finds nothing to do.
 */
export async function reencryptSecrets(sql: postgres.Sql, box: SecretBox): Promise<ReencryptResult> {
  const result: ReencryptResult = { checked: 0, reencrypted: 0, unreadable: [] };
  await reseal(sql, box, result, "webhook_subscriptions", ["secret_encrypted", "previous_secret_encrypted"], "");
  await reseal(sql, box, result, "evaluators", ["key_encrypted"], "evaluator:");
  return result;
}

/** One table's sealed columns, a page at a time; each value's associated data is its row id. */
async function reseal(
  sql: postgres.Sql,
  box: SecretBox,
  result: ReencryptResult,
  table: string,
  columns: string[],
  label: string,
): Promise<void> {
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const rows = await sql<Array<Record<string, string | null> & { id: string }>>`
      select id, ${sql(columns)} from ${sql(table)} where id > ${after} order by id limit 500`;
    if (rows.length === 0) return;
    after = rows[rows.length - 1].id;
    for (const row of rows) {
      for (const column of columns) {
        const sealed = row[column];
        if (!sealed) continue;
        result.checked++;
        if (!(await box.needsReseal(sealed))) continue;
        let plain: string;
        try {
          plain = await box.open(sealed, row.id);
        } catch (err) {
          if (!(err instanceof SecretUnreadableError)) throw err;
          if (!result.unreadable.includes(`${label}${row.id}`)) result.unreadable.push(`${label}${row.id}`);
          continue;
        }
        const resealed = await box.seal(plain, row.id);
        const updated =
          await sql`update ${sql(table)} set ${sql(column)} = ${resealed} where id = ${row.id} and ${sql(column)} = ${sealed}`;
        result.reencrypted += updated.count;
      }
    }
  }
}
