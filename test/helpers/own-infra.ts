import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { runMigrations } from "@cellar/shared/db/client";
import { startNatsServer, type RunningNats } from "../../scripts/infra/nats-server";
import { startEmbeddedPostgres, type RunningPostgres } from "../../scripts/infra/postgres";

/**
 * A Postgres (database `cellar`, migrated) and a nats-server of one test file's own, so it can
 * stop and restart them under running apps without harming any other test. `sql` is a small
 * pool for the test's own reads; `restartNats` stops the server and starts it again on the same
 * port and store after `downMs`.
 */
export async function startOwnInfra(name: string) {
  const scratch = mkdtempSync(join(tmpdir(), `cellar-${name}-`));
  const natsDir = join(scratch, "nats");
  const pg: RunningPostgres = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: true });
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe("create database cellar");
  await admin.end();
  const databaseUrl = pg.databaseUrl("cellar");
  await runMigrations(databaseUrl);
  let nats: RunningNats = await startNatsServer({ storeDir: natsDir, quiet: true });
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {}, connect_timeout: 2 });
  return {
    pg,
    databaseUrl,
    natsUrl: nats.url,
    sql,
    async restartNats(downMs: number): Promise<void> {
      const port = nats.port;
      await nats.stop();
      await new Promise((r) => setTimeout(r, downMs));
      nats = await startNatsServer({ storeDir: natsDir, port, quiet: true });
    },
    async stop(): Promise<void> {
      await sql.end({ timeout: 2 }).catch(() => {});
      await nats.stop();
      await pg.stop();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
