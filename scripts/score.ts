/**
 * `npm run score`: replays the analysis corpus (test/corpus/) through the real apps (ingest,
 * processor, platform on a real nats-server and Postgres, started here unless NATS_URL /
 * DATABASE_URL point at running ones) and prints, for the development set and the held-out set
 * apart (test/corpus/heldout/, CONTRIBUTING.md "the analysis corpus"), transcript exact-match, cost
 * exact-match, and precision and recall per detector and per class of injection. Exits 1 when a
 * transcript or cost differs or a detector is below 0.95 precision or recall in either set.
 *
 * `npm run score -- --development`: the development set only (what you look at while you change a
 * detector; the held-out set is measured once, after the change).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, type RunningNats } from "./infra/nats-server";
import { startEmbeddedPostgres, type RunningPostgres } from "./infra/postgres";

const scratch = mkdtempSync(join(tmpdir(), "cellar-score-"));
let nats: RunningNats | undefined;
let pg: RunningPostgres | undefined;
let code = 1;
/** The error already printed by the replay's own catch (not printed twice). */
let printed: unknown;
try {
  if (!process.env.NATS_URL) {
    nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
    process.env.NATS_URL = nats.url;
  }
  if (!process.env.DATABASE_URL) {
    pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
    process.env.DATABASE_URL = pg.url;
  }
  const { createTestStack } = await import("../test/helpers/stack");
  const { createLatencyNorms } = await import("../apps/processor/src/maturation/norms");
  const { replayCorpus } = await import("../test/corpus/replay");
  const { formatReport } = await import("../test/corpus/report");
  const stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  try {
    await stack.startProcessor({
      latencyNorms: createLatencyNorms(stack.database.sql, { ttlMs: 0 }),
      sweepGraceSeconds: 2,
      sweepIntervalMs: 2_000,
    });
    const developmentOnly = process.argv.includes("--development");
    const report = await replayCorpus(stack, { log: (line) => console.error(line), developmentOnly });
    console.log(formatReport(report));
    const meets = (r: typeof report.heldout) =>
      r.transcriptExact === r.total &&
      r.costExact === r.total &&
      Object.values(r.detectors).every((d) => d.precision >= 0.95 && d.recall >= 0.95);
    console.log(
      `\nbar (exact transcripts and costs, every detector >= 0.95): development ${meets(report) ? "met" : "NOT met"}, held-out ${developmentOnly ? "not run" : meets(report.heldout) ? "met" : "NOT met"}`,
    );
    code = meets(report) && (developmentOnly || meets(report.heldout)) ? 0 : 1;
  } catch (err) {
    // Printed before the stack stops (the stop is bounded, but it may take a while), then rethrown.
    console.error("score: the replay failed:", err);
    printed = err;
    throw err;
  } finally {
    await stack.stop();
  }
} catch (err) {
  if (err !== printed) console.error(err);
} finally {
  await Promise.allSettled([nats?.stop(), pg?.stop()]);
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(code);
