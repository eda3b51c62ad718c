import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "./schema/index.ts";

/** TLS settings (shared/deploy/postgres.ts) and the name this pool shows in pg_stat_activity. */
export interface ConnectionExtras {
  ssl?: postgres.Options<{}>["ssl"];
  applicationName?: string;
}

export type Db = PostgresJsDatabase<typeof schema>;
/** The postgres.js client under a Db (createDatabase builds it with drizzle(client): always set). */
export const sqlOf = (db: Db): postgres.Sql => (db as Db & { $client: postgres.Sql }).$client;
export interface Database {
  db: Db;
  sql: postgres.Sql;
  close(): Promise<void>;
}

/**
 * How long opening a connection may take. postgres.js's default is 30 s, during which a request
 * hangs when Postgres is unreachable; a loopback or LAN connect takes milliseconds.
 */
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 3;

/**
 * Seconds a pool waits before reconnecting after `failures` failed connections: 50 ms doubling,
 * at most 1 s, jittered. postgres.js's default grows as 3^failures / 100 up to 20 s, with the count
 * shared by the whole pool, so a few seconds of outage left apps waiting 12-20 s after Postgres
 * was back (chaos run, docs/reliability.md). Refused connects are cheap; waiting is not.
 */
export function reconnectBackoffSeconds(failures: number): number {
  return Math.min(0.05 * 2 ** failures, 1) * (0.5 + Math.random() / 2);
}

export interface DatabaseOptions {
  /** Pool size of the raw client (drizzle's pool is half of it). */
  max?: number;
  connectTimeoutSeconds?: number;
  /** Postgres statement_timeout for every statement on these pools (0 / omitted = none). */
  statementTimeoutMs?: number;
}

/**
 * Opens two pools; nothing connects until the first query. drizzle's postgres-js driver swaps
 * the client's type parsers and serializers for pass-through ones, so it gets a client of its
 * own and raw `sql` keeps postgres.js's normal Date and JSON handling.
 */
export function createDatabase(url: string, options: DatabaseOptions & ConnectionExtras = {}): Database {
  const max = options.max ?? 10;
  const connection: Record<string, string | number> = { application_name: options.applicationName ?? "cellar" };
  // A startup parameter: every statement on these pools is cancelled past it (SQLSTATE 57014).
  if (options.statementTimeoutMs) connection.statement_timeout = options.statementTimeoutMs;
  const base = {
    onnotice: () => {},
    connection,
    connect_timeout: options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS,
    backoff: reconnectBackoffSeconds,
    ...(options.ssl ? { ssl: options.ssl } : {}),
  };
  const sql = postgres(url, { ...base, max });
  const drizzleClient = postgres(url, { ...base, max: Math.max(2, Math.ceil(max / 2)) });
  const db = drizzle(drizzleClient, { schema });
  return {
    db,
    sql,
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), drizzleClient.end({ timeout: 5 })]);
    },
  };
}

export const MIGRATIONS_DIR = new URL("./migrations", import.meta.url).pathname;

/** Applies the committed SQL migrations; safe to run from several processes at once. */
export async function runMigrations(url: string, options: ConnectionExtras = {}): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, ...(options.ssl ? { ssl: options.ssl } : {}) });
  try {
    // Serialize concurrent starters (four apps may boot together).
    await sql`select pg_advisory_lock(727272)`;
    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_DIR });
    await sql`select pg_advisory_unlock(727272)`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export { schema };
