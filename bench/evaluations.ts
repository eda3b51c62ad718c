/**
 * `bun run bench/evaluations.ts [--sessions 200] [--rounds 1] [--judge-ms 0]`: what online
 * evaluations cost. Real nats-server and Postgres, the processor and the dispatcher built
 * in-process (maturation window 1 s), a judge on 127.0.0.1 answering in the OpenAI wire format
 * after `--judge-ms` (0: at once; a real provider takes hundreds of ms, and then what counts is
 * how many judge calls are in flight together: a MATURED batch's sessions side by side or not). Each round ingests
 * `--sessions` one-trace sessions into four services:
 * - floor: no evaluator;
 * - no-match: an evaluator (a model judge) whose filter takes nothing (environment "nowhere");
 * - check: a deterministic check on every session;
 * - judge: a model judge on every session.
 * Times each from the first publish until every session matured and (for check and judge) its
 * evaluation is stored; prints sessions/s, the process's CPU per session and the added CPU per
 * session against the floor, and the time from maturation to stored score (p50/p99).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { SecretBox } from "@cellar/shared/crypto";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { createLogger } from "@cellar/shared/logger";
import { connectNats, createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import { createDispatcher } from "../apps/dispatcher/src/dispatcher";
import { createProcessor } from "../apps/processor/src/processor";
import { startNatsServer } from "../scripts/infra/nats-server";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { createSessionPublisher } from "./lib/sessions";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    sessions: { type: "string", default: "200" },
    rounds: { type: "string", default: "1" },
    "judge-ms": { type: "string", default: "0" },
  },
});
const N = Number(args.sessions);
const JUDGE_MS = Number(args["judge-ms"]);
const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-evaluations-"));
const pg = await startEmbeddedPostgres({ dataDir: join(scratch, "pg"), persistent: false });
const nats = await startNatsServer({ storeDir: join(scratch, "nats"), quiet: true });
const database = createDatabase(pg.url, { max: 20 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const judge = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: async () => {
    if (JUDGE_MS > 0) await Bun.sleep(JUDGE_MS);
    return Response.json({
      choices: [{ message: { role: "assistant", content: '{"score": 0.7, "reason": "fine"}' } }],
      usage: { prompt_tokens: 800, completion_tokens: 20 },
    });
  },
});
try {
  await runMigrations(pg.url);
  const nc = await connectNats(nats.url, "bench-evaluations");
  const topology = createTopology("bench");
  const { js } = await ensureTopology(nc, topology);
  const tenant = await bootstrapTenant(database.db, { name: "bench" });
  const templates = makeTemplates(50);
  const logger = createLogger("warn");
  const processor = createProcessor({
    sql: database.sql,
    js,
    topology,
    logger,
    windowSeconds: 1,
    activityCoalesceMs: 0,
  });
  const dispatcher = createDispatcher({
    sql: database.sql,
    js,
    topology,
    logger,
    secretBox: new SecretBox(btoa("cellar-bench-secret-key-32-bytes")),
    insecureAllowlist: "127.0.0.0/8",
    evaluations: { cacheMs: 1_000 },
  });
  await processor.start();
  await dispatcher.start();
  const publishMany = createSessionPublisher(js, topology, tenant.tenantId, templates);
  const publishSessions = (service: string, prefix: string) => publishMany(service, prefix, N);
  const SERVICES = ["floor", "no-match", "check", "judge"] as const;
  for (const s of SERVICES) await publishSessions(s, `warm-${s}`);
  const serviceId = async (name: string) =>
    (await database.sql<{ id: string }[]>`select id from trace_services where name = ${name}`)[0]?.id;
  for (const s of SERVICES) while (!(await serviceId(s))) await sleep(100);
  const judgeSpec = {
    provider: "openai",
    url: `http://127.0.0.1:${judge.port}/v1/chat/completions`,
    model: "gpt-4o-mini",
    prompt: "Rate {{transcript}}.",
  };
  const evaluator = async (service: string, definition: Record<string, unknown>) =>
    (
      await database.sql`
        insert into evaluators (tenant_id, trace_service_id, name, target, definition)
        values (${tenant.tenantId}, ${(await serviceId(service))!}, ${`${service}-evaluator`}, 'session', ${database.sql.json(definition as never)})
        returning id`
    )[0].id as string;
  const common = { target: "session", sampling_rate: 1, daily_budget_usd: null, review_below: null };
  await evaluator("no-match", {
    ...common,
    judge: judgeSpec,
    output: { kind: "number", min: 0, max: 1 },
    filter: { environment: ["nowhere"] },
  });
  const checkId = await evaluator("check", {
    ...common,
    check: { type: "length", max: 10_000 },
    output: { kind: "boolean" },
    filter: {},
  });
  const judgeId = await evaluator("judge", {
    ...common,
    judge: judgeSpec,
    output: { kind: "number", min: 0, max: 1 },
    filter: {},
  });
  await sleep(1_500); // past the runner's evaluator cache
  // The warm-up sessions settle (and are judged) before anything is measured.
  const warmed = async () => {
    for (const s of SERVICES) if ((await settled(s, `warm-${s}`)) < N) return false;
    return (await judged(checkId, "warm-check")) + (await judged(judgeId, "warm-judge")) >= 2 * N;
  };

  const settled = async (service: string, prefix: string) =>
    (
      await database.sql<{ n: number }[]>`
        select count(*)::int as n from sessions s where s.trace_service_id = ${(await serviceId(service))!}
          and s.session_id like ${`${prefix}-%`} and s.published_count >= 1`
    )[0].n;
  const judged = async (evaluatorId: string, prefix: string) =>
    (
      await database.sql<{ n: number }[]>`
        select count(*)::int as n from evaluations where evaluator_id = ${evaluatorId} and entity_id like ${`${prefix}-%`}`
    )[0].n;
  const lat = async (evaluatorId: string, prefix: string) =>
    (
      await database.sql<{ ms: number }[]>`
        select (extract(epoch from ev.created_at - s.matured_at) * 1000)::float8 as ms
        from evaluations ev join sessions s on s.session_id = ev.entity_id and s.tenant_id = ev.tenant_id
        where ev.evaluator_id = ${evaluatorId} and ev.entity_id like ${`${prefix}-%`} order by 1`
    ).map((r) => r.ms);
  const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
  while (!(await warmed())) await sleep(200);
  // The floor is measured first and last in each round, its mean the reference (the machine is shared).
  const ORDER = ["floor", "no-match", "check", "judge", "floor"] as const;

  for (let round = 1; round <= Number(args.rounds); round++) {
    const rows: Array<{ service: string; rate: number; cpuUs: number; p50?: number; p99?: number }> = [];
    for (const [k, service] of ORDER.entries()) {
      const prefix = `r${round}-${k}-${service}`;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await publishSessions(service, prefix);
      const evaluatorId = service === "check" ? checkId : service === "judge" ? judgeId : null;
      for (;;) {
        const done =
          (await settled(service, prefix)) >= N && (!evaluatorId || (await judged(evaluatorId, prefix)) >= N);
        if (done) break;
        await sleep(50);
      }
      // The maturation window (1 s) and the last poll are in the elapsed time of every service alike.
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const latencies = evaluatorId ? await lat(evaluatorId, prefix) : [];
      rows.push({
        service,
        rate: N / seconds,
        cpuUs: (cpu.user + cpu.system) / N,
        ...(evaluatorId ? { p50: pct(latencies, 50), p99: pct(latencies, 99) } : {}),
      });
    }
    const floors = rows.filter((r) => r.service === "floor");
    const floor = { cpuUs: (floors[0].cpuUs + floors[1].cpuUs) / 2 };
    console.log(
      `round ${round}: ${N} sessions per service, judge answers after ${JUDGE_MS} ms; floor = mean of the first and last runs`,
    );
    for (const r of rows)
      console.log(
        `  ${r.service.padEnd(9)} ${r.rate.toFixed(1).padStart(6)} sessions/s  CPU ${(r.cpuUs / 1000).toFixed(2)} ms/session` +
          `  added ${((r.cpuUs - floor.cpuUs) / 1000).toFixed(2)} ms (${(r.cpuUs / floor.cpuUs).toFixed(2)}x floor)` +
          (r.p50 !== undefined ? `  maturation->score p50 ${r.p50.toFixed(0)} ms p99 ${r.p99!.toFixed(0)} ms` : ""),
      );
  }
  await dispatcher.stop();
  await processor.stop();
  await nc.drain();
} finally {
  judge.stop(true);
  await database.close();
  await nats.stop();
  await pg.stop();
  rmSync(scratch, { recursive: true, force: true });
}
