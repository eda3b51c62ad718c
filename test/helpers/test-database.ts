import { afterAll, beforeAll } from "bun:test";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { createTestDatabase } from "./infra";

/**
 * A fresh migrated database for this test file and a small pool on it: created before the
 * file's first test (before the file's own `beforeAll`s registered after this call), closed and
 * dropped after its last. Read `url` and `database` inside hooks and tests, not at load time.
 */
export function useTestDatabase(): { url: string; database: Database } {
  const handle = {} as { url: string; database: Database };
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const created = await createTestDatabase();
    drop = created.drop;
    handle.url = created.url;
    handle.database = createDatabase(created.url, { max: 2 });
  });
  afterAll(async () => {
    await handle.database?.close();
    await drop?.();
  });
  return handle;
}
