/**
 * The Cellar apps as separate processes (test/helpers/app-processes.ts) for the SDK's proof
 * tests, on a fresh database of their own; an app can be killed and started again on the same
 * port.
 */
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { startAppProcesses } from "./app-processes";
import { createTestDatabase } from "./infra";

type App = "ingest" | "platform" | "processor";

export async function startSdkApps() {
  const testDb = await createTestDatabase();
  const database: Database = createDatabase(testDb.url, { max: 3 });
  const stack = await startAppProcesses(testDb.url, ["ingest", "platform", "processor"]);
  return {
    database,
    ingestUrl: stack.ingestUrl,
    platformUrl: stack.platformUrl,
    start: (app: App, env: Record<string, string> = {}, name: string = app) => stack.start(app, { env, name }),
    kill: (name: string) => stack.kill(name),
    output: () => [...stack.apps.keys()].map((name) => `[${name}] ${stack.output(name)}`).join("\n"),
    async stop() {
      await stack.stop();
      await database.close();
      await testDb.drop();
    },
  };
}
