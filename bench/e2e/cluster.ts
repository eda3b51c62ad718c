import { readFileSync, writeFileSync } from "node:fs";
import type postgres from "postgres";

/** What bench/seed.ts leaves beside a seeded cluster (`<dataDir>.keys.json`). */
export interface SeedKeys {
  tenantId: string;
  telemetryKey: string;
  platformKey: string;
  service: string;
}
export const readSeedKeys = (dataDir: string): SeedKeys => JSON.parse(readFileSync(`${dataDir}.keys.json`, "utf8"));
export const writeSeedKeys = (dataDir: string, keys: SeedKeys) =>
  writeFileSync(`${dataDir}.keys.json`, JSON.stringify(keys));

/**
 * The same crash-unsafe settings the throwaway clusters of tests and other benches run with
 * (scripts/infra/postgres.ts), applied to a kept (seeded) cluster too so figures compare.
 */
export async function fastSettings(sql: postgres.Sql): Promise<void> {
  await sql`alter system set fsync = off`;
  await sql`alter system set synchronous_commit = off`;
  await sql`alter system set full_page_writes = off`;
  await sql`alter system set max_wal_size = '4GB'`;
  await sql`select pg_reload_conf()`;
}
