import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { runMigrations } from "@cellar/shared/db/client";

/** Starts nats-server and Postgres for this process when NATS_URL / DATABASE_URL are not given. */
export async function ensureTestInfra(): Promise<void> {
  if (process.env.NATS_URL && process.env.DATABASE_URL) return;
  const scratch = mkdtempSync(join(tmpdir(), "cellar-bun-test-"));
  const stops: Array<() => Promise<void>> = [];
  if (!process.env.NATS_URL) {
    const { startNatsServer } = await import("../../scripts/infra/nats-server");
    const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
    process.env.NATS_URL = nats.url;
    stops.push(nats.stop);
    process.on("exit", () => nats.process.kill("SIGKILL"));
  }
  if (!process.env.DATABASE_URL) {
    const { startEmbeddedPostgres } = await import("../../scripts/infra/postgres");
    const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
    process.env.DATABASE_URL = pg.url;
    stops.push(pg.stop);
  }
  const { afterAll } = await import("bun:test");
  afterAll(async () => {
    await Promise.allSettled(stops.map((s) => s()));
  });
}

const TEMPLATE = "cellar_template";
const templates = new Map<string, Promise<void>>();

/** A fresh database per test file, copied from a migrated template (fast). `adminUrl`: another server than the run's. */
export async function createTestDatabase(
  adminUrl = process.env.DATABASE_URL!,
): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    let templateReady = templates.get(adminUrl);
    if (!templateReady)
      templates.set(
        adminUrl,
        (templateReady = (async () => {
          await admin`select pg_advisory_lock(4242)`;
          try {
            const [row] = await admin`select 1 as ok from pg_database where datname = ${TEMPLATE}`;
            const templateUrl = withDatabase(adminUrl, TEMPLATE);
            if (!row) await admin.unsafe(`create database ${TEMPLATE}`);
            await runMigrations(templateUrl);
          } finally {
            await admin`select pg_advisory_unlock(4242)`;
          }
        })()),
      );
    await templateReady;
    const name = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    await admin.unsafe(`create database ${name} template ${TEMPLATE}`);
    const url = withDatabase(adminUrl, name);
    return {
      url,
      drop: async () => {
        const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
        try {
          await a.unsafe(`drop database if exists ${name} with (force)`);
        } finally {
          await a.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
