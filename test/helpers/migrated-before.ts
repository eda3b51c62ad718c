import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { MIGRATIONS_DIR } from "@cellar/shared/db/client";

/**
 * Runs `body` on a scratch database (beside the test database, dropped after) migrated with the
 * migrations before number `idx` only: the schema an existing deployment has before upgrading.
 * Upgrade tests read or fill it, then run the later migrations on it.
 */
export async function withDatabaseBefore<T>(
  idx: number,
  body: (sql: postgres.Sql, url: string) => Promise<T>,
): Promise<T> {
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_before${idx}_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  const dir = mkdtempSync(join(tmpdir(), `cellar-before${idx}-`));
  try {
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const journalPath = join(dir, "meta/_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < idx);
    writeFileSync(journalPath, JSON.stringify(journal));
    await migrate(drizzle(sql), { migrationsFolder: dir });
    return await body(sql, url.toString());
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 5 });
    rmSync(dir, { recursive: true, force: true });
  }
}
