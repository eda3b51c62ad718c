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
 * Upgrade tests read or fill it, then run the later migrations on it. The migration runs on a
 * client of its own: drizzle's migrator makes its client's json and array serializers
 * pass-through, and `body` gets a client with the usual ones.
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
    const migrator = postgres(url.toString(), { max: 1, onnotice: () => {} });
    await migrate(drizzle(migrator), { migrationsFolder: dir }).finally(() => migrator.end({ timeout: 5 }));
    return await body(sql, url.toString());
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 5 });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A tenant, its project and service `up-bot`, and one session `sessionId`, written with plain SQL (any schema since 0000). */
export async function insertSession(sql: postgres.Sql, sessionId: string) {
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, plan) values ('up', 'pro') returning id`;
  const [project] = await sql<
    { id: string }[]
  >`insert into projects (tenant_id, name) values (${tenant.id}, 'up') returning id`;
  const [svc] = await sql<{ id: string }[]>`
    insert into trace_services (tenant_id, project_id, name) values (${tenant.id}, ${project.id}, 'up-bot') returning id`;
  const [s] = await sql<{ id: string }[]>`
    insert into sessions (tenant_id, trace_service_id, session_id, first_activity_at, last_activity_at, last_ingested_at)
    values (${tenant.id}, ${svc.id}, ${sessionId}, now(), now(), now()) returning id`;
  return { tenantId: tenant.id, serviceId: svc.id, sessionPk: s.id };
}
