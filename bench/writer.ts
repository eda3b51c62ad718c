/**
 * `bun run bench/writer.ts [--traces 20000] [--batch 500] [--rounds 3]`: the processor's write
 * path alone (`writeIngestBatch`, no NATS) into a scratch Postgres, Postgres and client CPU per
 * trace from /proc. Realistic payloads (bench/lib/traces.ts), 5 traces per session. Rounds
 * alternate the variants named by WRITER_VARIANTS (comma-separated values of the
 * CELLAR_WRITER_TRACES switch in writer.ts), default "insert,copy".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { cpuByProcess, postmasterPid } from "./lib/proc";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    traces: { type: "string", default: "20000" },
    batch: { type: "string", default: "500" },
    rounds: { type: "string", default: "3" },
  },
});
const N = Number(args.traces);
const BATCH = Number(args.batch);
const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-writer-"));
const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
const database = createDatabase(pg.url, { max: 4 });
try {
  await runMigrations(pg.url);
  const tenant = await bootstrapTenant(database.db, { name: "w" });
  const templates = makeTemplates(200);
  const pm = postmasterPid(join(scratch, "pg"));
  let run = 0;
  for (let r = 0; r < Number(args.rounds); r++) {
    {
      run++;
      const messages: IngestMessage[] = Array.from({ length: N }, (_, i) => ({
        kind: "trace",
        messageId: `r${run}-${i}`,
        tenantId: tenant.tenantId,
        serviceName: "support-bot",
        receivedAt: new Date().toISOString(),
        payload: JSON.parse(templates[i % 200].replace("__SESSION__", `r${run}-s${Math.floor(i / 5)}`)),
      }));
      const c0 = cpuByProcess({ client: [process.pid] }, pm);
      const t0 = performance.now();
      // Two batches at once, as the processor writes them.
      for (let i = 0; i < N; i += 2 * BATCH) {
        await Promise.all([
          writeIngestBatch(database.sql, messages.slice(i, i + BATCH)),
          writeIngestBatch(database.sql, messages.slice(i + BATCH, i + 2 * BATCH)),
        ]);
      }
      const secs = (performance.now() - t0) / 1000;
      const c1 = cpuByProcess({ client: [process.pid] }, pm);
      const us = (k: string) => Math.round(((c1[k] - c0[k]) * 1e6) / N);
      const [{ n }] = await database.sql<
        { n: number }[]
      >`select count(*)::int as n from traces where session_id like ${`r${run}-%`}`;
      console.log(
        `round ${r + 1}: ${Math.round(N / secs)} traces/s, postgres ${us("postgres")} us/trace, client ${us("client")} us/trace (${n} rows)`,
      );
    }
  }
} finally {
  await database.close();
  await pg.stop();
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
