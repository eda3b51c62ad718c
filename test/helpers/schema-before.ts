import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { MIGRATIONS_DIR } from "@cellar/shared/db/client";

/**
 * Runs `body` on a new database of the test server migrated only up to the migrations before
 * journal index `beforeIdx` (the schema an older deployment has), then drops it. `url` is the
 * database's, for runMigrations; `sql` a client of its own (drizzle's migrator makes its client's
 * json and array serializers pass-through, so it gets another).
 */
export async function withSchemaBefore(
  beforeIdx: number,
  body: (db: { sql: postgres.Sql; url: string }) => Promise<void>,
): Promise<void> {
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_before${beforeIdx}_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  const folder = mkdtempSync(join(tmpdir(), `cellar-mig${beforeIdx}-`));
  try {
    cpSync(MIGRATIONS_DIR, folder, { recursive: true });
    const journalPath = join(folder, "meta/_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < beforeIdx);
    writeFileSync(journalPath, JSON.stringify(journal));
    const migrator = postgres(url.toString(), { max: 1, onnotice: () => {} });
    await migrate(drizzle(migrator), { migrationsFolder: folder });
    await migrator.end({ timeout: 5 });
    await body({ sql, url: url.toString() });
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 5 });
    rmSync(folder, { recursive: true, force: true });
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
