/**
 * `bun run bench/writer.ts [--traces 20000] [--batch 500] [--rounds 3]`: the processor's write
 * path alone (`writeIngestBatch`, no NATS) into a scratch Postgres, Postgres and client CPU per
 * trace from /proc. Realistic payloads (bench/lib/traces.ts), 5 traces per session. Rounds
 * alternate the variants named by WRITER_VARIANTS (comma-separated values of the
 * CELLAR_WRITER_TRACES switch in writer.ts), default "insert,copy".
 */
import { parseArgs } from "node:util";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { runBench } from "./lib/harness";
import { cpuByProcess } from "./lib/proc";
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
await runBench("writer", {}, async (bench) => {
  const { database } = bench;
  const tenant = await bench.tenant({ name: "w" });
  const templates = makeTemplates(200);
  const pm = bench.pg.pid();
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
});
