/**
 * `bun run bench/transcript-read.ts`: the lean transcript page (`limit=100`, random offset: the
 * read bench/e2e/reads.ts times) of long sessions whose items are references into the stored
 * payloads, built as maturation builds them (buildTranscript + persistTranscriptItems over
 * payloads stored deflated as the processor stores them). Two sessions:
 *
 * - `e2e`: one trace after another, each a different bench template (the e2e load generator's
 *   sessions, made long): a page references 15-30 payloads of 2-6 KB.
 * - `history`: a chat client resending the whole conversation (trace k's request holds every
 *   message so far): a page references a few dozen payloads that grow with the conversation.
 *
 * Per session it prints, median over rounds: the page read through the platform's own function
 * (readTranscript, p50/p99 and this process's CPU per read), cold (the payload-parts cache of
 * apps/platform/src/query/sessions/payload-cache.ts emptied first) and warm (the same page again), beside floors measured in the same
 * rounds: a bare `select` of the same item rows (all their columns, as the page's query reads
 * them) and a bare JSON.stringify of the page's items; then the same page over HTTP through the
 * platform (apps/platform/src/main.ts in a child process: p50/p99, its CPU per read and
 * Postgres') beside a bare HTTP GET of the platform's health endpoint.
 *
 *   bun run bench/transcript-read.ts [--traces 250] [--reads 200] [--rounds 3] [--http 300]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { itemRowsSql } from "@cellar/shared/analysis/transcript-rows";
import { readTranscript } from "../apps/platform/src/query/sessions/transcript";
import { buildTranscript, type TraceInput } from "../apps/processor/src/analysis/transcript";
import { persistTranscriptItems } from "../apps/processor/src/maturation/persist";
import type { SessionRow } from "../apps/processor/src/maturation/store";
import { runBench } from "./lib/harness";
import { cpuByProcess, pct } from "./lib/proc";
import { insertMaturedTrace, seedService } from "./lib/seed";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    traces: { type: "string", default: "250" },
    reads: { type: "string", default: "200" },
    rounds: { type: "string", default: "3" },
    http: { type: "string", default: "300" },
  },
});
const TRACES = Number(args.traces);
const READS = Number(args.reads);
const ROUNDS = Number(args.rounds);
const HTTP_READS = Number(args.http);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f2 = (x: number) => x.toFixed(2);

/** Payloads of a long session's traces, `shape` as above. */
function sessionPayloads(shape: "e2e" | "history", sessionId: string, templates: any[]): any[] {
  const out: any[] = [];
  const conversation: any[] = [];
  for (let k = 0; k < TRACES; k++) {
    const t = structuredClone(templates[k % templates.length]);
    t.session_id = sessionId;
    if (shape === "history") {
      // The new turn: the template's last user message (and its tool round trip when it has one),
      // after everything said so far; the answer is the response's message.
      const msgs = t.request.messages as any[];
      if (k === 0) conversation.push(msgs[0]);
      const turn = msgs.slice(-4).filter((m) => m.role !== "system");
      conversation.push(...turn.map((m) => ({ ...m, content: m.content && `${m.content} (turn ${k})` })));
      t.request.messages = [...conversation];
      conversation.push(t.responses[0].choices[0].message);
    }
    out.push(t);
  }
  return out;
}

await runBench("transcript-read", { nats: true, poolMax: 4 }, async (bench) => {
  const sql = bench.database.sql;
  const tenant = await bench.tenant({ plan: "pro" });
  const svc = await seedService(bench.database.db, tenant.tenantId, "bench-bot");
  const T = tenant.tenantId;
  const S = svc.id;
  const templates = makeTemplates(200).map((t) => JSON.parse(t));
  const sessions: Array<{ name: string; pk: string; items: number }> = [];

  for (const shape of ["e2e", "history"] as const) {
    const sessionId = `long-${shape}`;
    const t0 = Date.now() - 86_400_000;
    const [s] = await sql<{ id: string }[]>`
      insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
      values (${T}, ${S}, ${sessionId}, 'matured', ${new Date(t0)}, ${new Date(t0)}, ${new Date(t0)}, 1, now(), 1) returning id`;
    const history: TraceInput[] = [];
    for (const [k, payload] of sessionPayloads(shape, sessionId, templates).entries())
      history.push(
        await insertMaturedTrace(
          sql,
          {
            tenantId: T,
            serviceId: S,
            sessionPk: s.id,
            sessionId,
            traceId: `${sessionId}-${k}`,
            start: new Date(t0 + k * 20_000),
          },
          payload,
        ),
      );
    const { items } = buildTranscript(history, []);
    await sql.begin((tx) => persistTranscriptItems(tx, { id: s.id, tenant_id: T } as SessionRow, items, false));
    await sql`
      insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, metrics)
      values (${s.id}, ${T}, ${S}, ${sessionId}, 1, now(), now(), 1, ${items.length}, '{}'::jsonb)`;
    sessions.push({ name: sessionId, pk: s.id, items: items.length });
  }
  await sql`vacuum analyze`;
  for (const s of sessions) {
    const [r] = await sql<{ refs: number; bytes: number }[]>`
      select count(*)::int as refs, coalesce(sum(octet_length(z.payload_z)), 0)::int as bytes from trace_payloads z
      where z.trace_pk in (select source_trace_pk from (${sql.unsafe(itemRowsSql({ session: `'${s.pk}'::uuid` }))}) ti)`;
    console.log(
      `${s.name}: ${TRACES} traces, ${s.items} items referencing ${r.refs} payloads (${Math.round(r.bytes / r.refs)} B stored each)`,
    );
  }

  // The page's rows as the page's query reads them (either stored shape: runs since migration 0040).
  const pageRows = `select * from (${itemRowsSql({ session: "$1::uuid", limit: "100", offset: "$2" })}) ti order by position`;
  const cpuNow = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };

  // The payload cache (payload-cache.ts), when this checkout has one: emptied before each cold read.
  const cache = await import("../apps/platform/src/query/sessions/payload-cache").catch(() => null);
  // In-process rounds: the read cold and warm, the bare select, the bare stringify, interleaved per read.
  for (const s of sessions) {
    const pages = Math.max(1, Math.floor(s.items / 100));
    type Round = {
      cold: number[];
      warm: number[];
      select: number[];
      stringify: number[];
      coldCpu: number;
      warmCpu: number;
      floorCpu: number;
    };
    const rounds: Round[] = [];
    const read = async (offset: number) => {
      const c = cpuNow();
      const a = performance.now();
      const body = await (await readTranscript(sql, S, s.name, { limit: 100, offset, content: "lean" }, 1)).text();
      return { ms: performance.now() - a, cpu: cpuNow() - c, body };
    };
    for (let round = 0; round < ROUNDS; round++) {
      const r: Round = { cold: [], warm: [], select: [], stringify: [], coldCpu: 0, warmCpu: 0, floorCpu: 0 };
      for (let i = 0; i < READS; i++) {
        const offset = ((i * 7 + round) % pages) * 100;
        cache?.clearPayloadCache();
        const cold = await read(offset);
        r.cold.push(cold.ms);
        r.coldCpu += cold.cpu;
        const warm = await read(offset);
        r.warm.push(warm.ms);
        r.warmCpu += warm.cpu;
        const page = JSON.parse(cold.body).items;
        const c = cpuNow();
        let a = performance.now();
        await sql.unsafe(pageRows, [s.pk, offset], { prepare: true });
        r.select.push(performance.now() - a);
        a = performance.now();
        JSON.stringify(page);
        r.stringify.push(performance.now() - a);
        r.floorCpu += cpuNow() - c;
      }
      for (const xs of [r.cold, r.warm, r.select, r.stringify]) xs.sort((x, y) => x - y);
      rounds.push(r);
    }
    // What this session's pages keep: every page read once more after emptying the cache.
    cache?.clearPayloadCache();
    for (let page = 0; page < pages; page++) await read(page * 100);
    const kept = cache ? `; its ${pages} pages keep ${Math.round(cache.keptBytes() / 1024)} KB of payload parts` : "";
    const m = (pick: (r: Round) => number) => f2(median(rounds.map(pick)));
    const p = (pick: (r: Round) => number[]) => `${m((r) => pct(pick(r), 50))}/${m((r) => pct(pick(r), 99))}`;
    console.log(
      `${s.name} in-process (median of ${ROUNDS} rounds of ${READS}), p50/p99 ms and process CPU per read:` +
        ` cold ${p((r) => r.cold)}, CPU ${m((r) => r.coldCpu / READS)}; warm ${p((r) => r.warm)}, CPU ${m((r) => r.warmCpu / READS)}` +
        ` | floors: bare select of the rows ${p((r) => r.select)}, bare JSON.stringify of the page ${p((r) => r.stringify)},` +
        ` CPU of both ${m((r) => r.floorCpu / READS)}${kept}`,
    );
  }

  if (HTTP_READS <= 0) return;
  const { child, port } = await bench.spawnApp("platform", {
    env: { LOG_LEVEL: "warn" },
    bunFlags: process.env.PLATFORM_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PLATFORM_CPU_PROF}`] : [],
    stdio: ["ignore", "inherit", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Token ${tenant.platformKey}` };
  const postmaster = Number(readFileSync(join(bench.scratch, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
  const cpuMs = () => {
    const c = cpuByProcess({ platform: [child.pid] }, postmaster);
    return { app: c.platform * 1000, db: (c.postgres ?? 0) * 1000 };
  };
  // Paced under the platform's per-key rate limit (50/s), the pause outside the timed request.
  let last = 0;
  const get = async (path: string) => {
    const wait = last + 21 - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    last = performance.now();
    const a = performance.now();
    const res = await fetch(base + path, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path} -> ${res.status}`);
    return performance.now() - a;
  };
  for (const s of sessions) {
    const pages = Math.max(1, Math.floor(s.items / 100));
    const path = (i: number) =>
      `/api/v1/telemetry/otel/sessions/bench-bot/${s.name}/transcript?limit=100&offset=${(i % pages) * 100}`;
    for (let i = 0; i < 100; i++) await get(path(i)); // the platform's JIT warms up
    const read: number[] = [];
    const floor: number[] = [];
    let cpu = { app: 0, db: 0 };
    for (let i = 0; i < HTTP_READS; i++) {
      const c0 = cpuMs();
      read.push(await get(path(i * 7)));
      const c1 = cpuMs();
      cpu = { app: cpu.app + c1.app - c0.app, db: cpu.db + c1.db - c0.db };
      floor.push(await get("/health"));
    }
    read.sort((a, b) => a - b);
    floor.sort((a, b) => a - b);
    console.log(
      `${s.name} over HTTP (${HTTP_READS}): p50/p99 ${f2(pct(read, 50))}/${f2(pct(read, 99))} ms, CPU per read platform ${f2(cpu.app / HTTP_READS)} ms,` +
        ` postgres ${f2(cpu.db / HTTP_READS)} ms | floor: bare GET /health ${f2(pct(floor, 50))}/${f2(pct(floor, 99))} ms`,
    );
  }
});
