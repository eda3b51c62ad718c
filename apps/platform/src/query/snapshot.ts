import type postgres from "postgres";

/**
 * Runs a read of several statements in one snapshot: a REPEATABLE READ, READ ONLY transaction
 * on one connection (its statements pipelined), so what they return agrees, whatever commits
 * meanwhile. Run apart (a connection each), a read could count a row its page did not show, or
 * a rollup committed between two of them (the overview's p50 came back null that way).
 * Read-only and repeatable read both hold on a streaming replica (DATABASE_READ_URL).
 */
export function inSnapshot<T>(sql: postgres.Sql, read: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return sql.begin("isolation level repeatable read read only", read) as Promise<T>;
}
