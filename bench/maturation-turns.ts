/**
 * `npm run bench -- maturation-turns [--turns 10,100,1000] [--repeat 3]`: what a re-maturation of a
 * growing conversation costs at turn T (issue 36, continued folds: docs/maturation.md). A session
 * of T-1 turns is matured (twice: at T-2 and T-1), then each of --repeat new turns re-opens it and it matures again
 * (the maturation that follows a turn once the window passes). Timed per re-maturation: this
 * process's CPU (the processor's share) and Postgres', median of --repeat; for a processor that
 * keeps its folds (a fold continued with the new turn) and one that folds every history whole
 * (the code before), on two tenants fed the same turns. Beside them, the bare maturation of one
 * trace (bench/e2e/floor.ts) measured in the same run. A continued fold's cost should not grow
 * with T; a whole fold's grows with it.
 *
 * Real Postgres and nats-server, the processor's own functions called in this process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { connectNats, createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import type { IngestMessage } from "@cellar/shared/payloads";
import { writeIngestBatch } from "../apps/processor/src/ingest/writer";
import { FoldCache } from "../apps/processor/src/maturation/fold-cache";
import { matureSessions, type MaturationDeps } from "../apps/processor/src/maturation/mature";
import { createLatencyNorms } from "../apps/processor/src/maturation/norms";
import { startNatsServer } from "../scripts/infra/nats-server";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { measureFloor } from "./e2e/floor";
import { cpuByProcess, postmasterPid } from "./lib/proc";
import { chunks } from "./lib/sessions";

const { values: args } = parseArgs({
  options: { turns: { type: "string", default: "10,100,1000" }, repeat: { type: "string", default: "3" } },
});
const TURNS = args.turns.split(",").map(Number);
const REPEAT = Number(args.repeat);
/** About 50 characters of text, different per seed (a turn's words from the seed's digits). */
const VOCABULARY = [
  "refund",
  "carrier",
  "invoice",
  "keyboard",
  "tracking",
  "warehouse",
  "address",
  "switch",
  "cable",
  "delivery",
];
const text = (seed: number): string =>
  [...String(seed * 7919 + 104_729)].map((d, k) => VOCABULARY[(Number(d) + k) % VOCABULARY.length]).join(" ");
const T0 = Date.now() - 6 * 3_600_000;
/** Turn k of a conversation: its request re-sends turns 0..k-1 (as chat apps do). */
function turnPayload(session: string, k: number): Record<string, unknown> {
  const messages: Array<Record<string, unknown>> = [{ role: "system", content: "You are a support assistant." }];
  for (let j = 0; j < k; j++)
    messages.push({ role: "user", content: text(2 * j) }, { role: "assistant", content: text(2 * j + 1) });
  messages.push({ role: "user", content: text(2 * k) });
  const start = T0 + k * 10_000;
  return {
    provider: "openai",
    session_id: session,
    trace_id: `${session}-t${k}`,
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 900).toISOString(),
    request: { model: "gpt-4o-mini", messages },
    responses: [
      {
        id: `r-${k}`,
        model: "gpt-4o-mini",
        choices: [{ index: 0, message: { role: "assistant", content: text(2 * k + 1) }, finish_reason: "stop" }],
        usage: { prompt_tokens: 40 * (k + 1), completion_tokens: 30, total_tokens: 40 * (k + 1) + 30 },
      },
    ],
  };
}

const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-turns-"));
const pgDir = join(scratch, "pg");
const pg = await startEmbeddedPostgres({ dataDir: pgDir, persistent: true });
const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
try {
  const database = createDatabase(pg.url, { max: 4 });
  const sql = database.sql;
  await runMigrations(pg.url);
  const nc = await connectNats(nats.url, "bench-turns");
  const topology = createTopology("bench");
  const { js } = await ensureTopology(nc, topology);
  const kept = await bootstrapTenant(database.db, { name: "kept" });
  const whole = await bootstrapTenant(database.db, { name: "whole" });
  const base = { sql, js, topology, logger: createLogger("warn"), windowSeconds: 1 };
  const deps = {
    kept: { ...base, foldCache: new FoldCache(), latencyNorms: createLatencyNorms(sql) } as MaturationDeps,
    whole: { ...base, latencyNorms: createLatencyNorms(sql) } as MaturationDeps,
  };
  const tenantOf = { kept: kept.tenantId, whole: whole.tenantId };
  const postmaster = postmasterPid(pgDir);
  const write = async (sessions: string[], from: number, to: number) => {
    const messages: IngestMessage[] = [];
    for (const mode of ["kept", "whole"] as const)
      for (const session of sessions)
        for (let k = from; k < to; k++)
          messages.push({
            kind: "trace",
            messageId: `${mode}-${session}-${k}`,
            tenantId: tenantOf[mode],
            serviceName: "turns",
            receivedAt: new Date().toISOString(),
            payload: turnPayload(session, k),
          } as unknown as IngestMessage);
    for (const part of chunks(messages, 100)) await writeIngestBatch(sql, part);
    await Bun.sleep(1_200); // the window passes
  };
  const pksOf = async (mode: "kept" | "whole", sessions: string[]) =>
    (
      await sql<{ id: string }[]>`
        select id from sessions where tenant_id = ${tenantOf[mode]} and session_id = any(${sql.array(sessions)}) order by id`
    ).map((r) => r.id);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `maturation at turn T (load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")})`,
  );
  const rows: string[] = [];
  for (const T of TURNS) {
    // Sessions of a turn matured together (one chunk, as the activity consumer batches them).
    const sessions = Array.from({ length: T >= 1_000 ? 2 : 8 }, (_, i) => `conv-${T}-${i}`);
    // Matured at turn T-2, then re-opened by turn T-1 and matured again: a processor keeps a fold
    // from a session's second maturation on (docs/maturation.md, "Continued folds").
    await write(sessions, 0, T - 2);
    for (const mode of ["kept", "whole"] as const) await matureSessions(deps[mode], await pksOf(mode, sessions));
    await write(sessions, T - 2, T - 1);
    for (const mode of ["kept", "whole"] as const) await matureSessions(deps[mode], await pksOf(mode, sessions));
    const us: Record<string, { self: number[]; pg: number[] }> = {
      kept: { self: [], pg: [] },
      whole: { self: [], pg: [] },
    };
    for (let r = 0; r < REPEAT; r++) {
      await write(sessions, T - 1 + r, T + r);
      for (const mode of ["kept", "whole"] as const) {
        const pks = await pksOf(mode, sessions);
        const u0 = process.cpuUsage();
        const p0 = cpuByProcess({}, postmaster).postgres;
        const out = await matureSessions(deps[mode], pks);
        const u = process.cpuUsage(u0);
        const p1 = cpuByProcess({}, postmaster).postgres;
        for (const pk of pks) if (out.get(pk) !== "matured") throw new Error(`${mode} ${pk}: ${out.get(pk)}`);
        us[mode].self.push((u.user + u.system) / pks.length);
        us[mode].pg.push(((p1 - p0) * 1e6) / pks.length);
      }
    }
    const line = (mode: "kept" | "whole") =>
      `processor ${median(us[mode].self).toFixed(0)} us + postgres ${median(us[mode].pg).toFixed(0)} us`;
    rows.push(
      `  turn ${String(T).padStart(5)} (${sessions.length} sessions a chunk, median of ${REPEAT}): continued fold ${line("kept")}; whole fold ${line("whole")}; load ${loadavg()[0].toFixed(1)}`,
    );
    console.log(rows.at(-1));
  }
  const stats = (deps.kept.foldCache as FoldCache).stats;
  console.log(`  kept folds: ${stats.continued} continued, ${stats.refused} refused`);
  const floor = await measureFloor({ nc, sql, pgDir, natsPid: nats.process.pid!, rows: 5_000 });
  console.log(`  bare maturation (the floor): ${floor.maturationUs} us per trace; load ${loadavg()[0].toFixed(1)}`);
  await nc.close();
  await database.close();
} finally {
  await Promise.allSettled([nats.stop(), pg.stop()]);
  rmSync(scratch, { recursive: true, force: true });
}
