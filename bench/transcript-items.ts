/**
 * `bun run bench/transcript-items.ts`: transcript items stored as copies (the shape before
 * migration 0018) against references into the stored payloads (docs/analysis.md, "Items as
 * references"), on the same sessions in one run. Each session grows by one trace at a time and
 * matures after each (requests repeat the history, as chat clients send it; payloads from
 * bench/lib/traces.ts, stored deflated as the processor stores them). Prints, per shape: stored
 * bytes of `transcript_items` per trace, rows written, WAL bytes and wall time of the item writes
 * per maturation (beside a bare `select 1` per maturation), and the p50/p99 of a lean transcript
 * page (`limit=100`) read both ways, interleaved, beside a bare primary-key read of the table.
 *
 * With `--data-dir` (a cluster bench/seed.ts filled), only the reads: lean first pages of random
 * seeded sessions beside a bare `select 1` and a bare primary-key read, at the seeded size.
 *
 *   bun run bench/transcript-items.ts [--sessions 300] [--traces 6] [--reads 600]
 *   bun run bench/transcript-items.ts --data-dir <seeded cluster> [--reads 2000]
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type postgres from "postgres";
import { buildTranscript, type TraceInput, type TranscriptItem } from "../apps/processor/src/analysis/transcript";
import { persistTranscriptItems } from "../apps/processor/src/maturation/persist";
import type { SessionRow } from "../apps/processor/src/maturation/store";
import { loadSession } from "../apps/platform/src/sessions/service";
import { readTranscript } from "../apps/platform/src/sessions/transcript";
import { readSeedKeys } from "./e2e/cluster";
import { runBench } from "./lib/harness";
import { insertMaturedTrace, seedService } from "./lib/seed";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    sessions: { type: "string", default: "300" },
    traces: { type: "string", default: "6" },
    reads: { type: "string", default: "600" },
    "data-dir": { type: "string" },
  },
});
const SESSIONS = Number(args.sessions);
const TRACES = Number(args.traces);
const READS = Number(args.reads);

/** The write before migration 0018 (main's persistTranscriptItems): every item copied, all rewritten. */
async function persistCopies(tx: postgres.TransactionSql, s: SessionRow, items: TranscriptItem[], replace: boolean) {
  if (replace) await tx`delete from transcript_items where session_pk = ${s.id}`;
  const rows = items.map((item, position) => ({
    session_pk: s.id,
    position,
    tenant_id: s.tenant_id,
    item_id: item.id,
    kind: item.type,
    role: item.role,
    timestamp: item.timestamp,
    trace_id: item.traceId,
    span_id: item.spanId,
    item,
  }));
  if (rows.length)
    await tx`
      insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item)
      select session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item
      from jsonb_to_recordset(${tx.json(rows as never)}::jsonb) as x(session_pk uuid, position int, tenant_id uuid, item_id text, kind text,
        role text, timestamp timestamptz, trace_id text, span_id text, item jsonb)
      on conflict (session_pk, item_id) do nothing`;
}

/** The lean page read before migration 0018: one statement serializing the stored copies. */
const LEAN_BEFORE = `select string_agg((case when ti.kind in ('tool_call', 'tool_result') then
    (ti.item - 'spanAttributes' - 'reasoning') || jsonb_build_object(
      'content', case when length(c.text) > 500 then to_jsonb(left(c.text, 500)) else ti.item -> 'content' end,
      'contentLength', coalesce(length(c.text), 0), 'contentTruncated', coalesce(length(c.text), 0) > 500)
  else ti.item - 'spanAttributes' - 'reasoning' end)::text, ',' order by ti.position) as items, count(*)::int as n
  from (select position, kind, item from transcript_items_copies where session_pk = $1 order by position limit 100 offset 0) ti
  cross join lateral (select case jsonb_typeof(ti.item -> 'content') when 'string' then ti.item ->> 'content' when 'null' then null else (ti.item -> 'content')::text end as text) c`;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x: number) => x.toFixed(2);

if (args["data-dir"]) await seededReads(resolve(args["data-dir"]));

/** Lean first pages of random sessions of a seeded cluster, beside `select 1` and a primary-key read. */
async function seededReads(dataDir: string): Promise<never> {
  return runBench("transcript-items", { dataDir, poolMax: 4 }, async (bench) => {
    const sql = bench.database.sql;
    const keys = readSeedKeys(dataDir);
    const [svc] = await sql<{ id: string }[]>`
      select id from trace_services where tenant_id = ${keys.tenantId} and name = ${keys.service}`;
    const [{ traces, sessions }] = await sql<{ traces: number; sessions: number }[]>`
      select (select count(*) from traces)::int as traces,
        (select coalesce(max(substr(session_id, 6)::int), 0) from sessions where session_id like 'seed-%')::int as sessions`;
    const page: number[] = [];
    const one: number[] = [];
    const pk: number[] = [];
    for (let i = 0; i < READS; i++) {
      const sessionId = `seed-${1 + Math.floor(Math.random() * sessions)}`;
      let a = performance.now();
      const r = await readTranscript(sql, svc.id, sessionId, { limit: 100, offset: 0, content: "lean" }, 1).catch(
        () => null,
      );
      if (!r) continue; // a session retention removed
      await r.text();
      page.push(performance.now() - a);
      a = performance.now();
      await sql.unsafe("select 1", [], { prepare: true });
      one.push(performance.now() - a);
      a = performance.now();
      await sql.unsafe(
        "select position from transcript_items where session_pk = (select id from sessions where trace_service_id = $1 and session_id = $2) and position = 0",
        [svc.id, sessionId],
        { prepare: true },
      );
      pk.push(performance.now() - a);
    }
    const p = (xs: number[]) => `${ms(pct(xs, 50))}/${ms(pct(xs, 99))}`;
    console.log(
      `seeded: ${traces.toLocaleString("en")} traces; ${page.length} lean first pages p50/p99 ${p(page)} ms;` +
        ` floors: select 1 ${p(one)} ms, session + primary-key read ${p(pk)} ms`,
    );
  });
}

await runBench("transcript-items", { poolMax: 4 }, async (bench) => {
  const sql = bench.database.sql;
  const tenant = await bench.tenant({ plan: "pro" });
  const svc = await seedService(bench.database.db, tenant.tenantId, "bench-bot");
  const T = tenant.tenantId;
  const S = svc.id;
  const templates = makeTemplates(200).map((t) => JSON.parse(t));

  // Sessions of TRACES traces: trace k sends a longer prefix of the template's conversation.
  const sessions: Array<{ row: SessionRow; sessionId: string; history: TraceInput[] }> = [];
  const t0 = Date.now() - 3_600_000;
  for (let g = 0; g < SESSIONS; g++) {
    const sessionId = `s-${g}`;
    const at = new Date(t0 + g * 1000);
    const [s] = await sql<{ id: string }[]>`
      insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
      values (${T}, ${S}, ${sessionId}, 'matured', ${at}, ${at}, ${at}, ${TRACES}, ${at}, ${TRACES}) returning id`;
    const template = templates[g % templates.length];
    const history: TraceInput[] = [];
    for (let k = 0; k < TRACES; k++) {
      const messages = template.request.messages;
      const start = new Date(at.getTime() + k * 20_000);
      const end = new Date(start.getTime() + 900);
      const payload = {
        ...template,
        session_id: sessionId,
        start_time: start.toISOString(),
        end_time: end.toISOString(),
        request: { ...template.request, messages: messages.slice(0, Math.ceil((messages.length * (k + 1)) / TRACES)) },
      };
      history.push(
        await insertMaturedTrace(
          sql,
          { tenantId: T, serviceId: S, sessionPk: s.id, sessionId, traceId: `${sessionId}-${k}`, start },
          payload,
        ),
      );
    }
    sessions.push({ row: { id: s.id, tenant_id: T } as SessionRow, sessionId, history });
  }
  await sql`vacuum analyze`;

  const wal = async () => (await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`)[0].lsn;
  const walBytes = async (from: string) =>
    Number((await sql<{ n: string }[]>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${from}::pg_lsn)::text as n`)[0].n);
  const tableStats = async () =>
    (
      await sql<{ ins: string; del: string }[]>`
      select n_tup_ins::text as ins, n_tup_del::text as del from pg_stat_user_tables where relname = 'transcript_items'`
    )[0];

  async function phase(name: string, persist: typeof persistCopies) {
    await sql`truncate transcript_items`;
    await sql`select pg_stat_reset()`;
    const from = await wal();
    let writeMs = 0;
    let floorMs = 0;
    let maturations = 0;
    for (const s of sessions) {
      for (let m = 1; m <= TRACES; m++) {
        const { items } = buildTranscript(s.history.slice(0, m), []);
        await sql.begin(async (tx) => {
          const a = performance.now();
          await persist(tx, s.row, items, m > 1);
          writeMs += performance.now() - a;
          const b = performance.now();
          await tx`select 1`;
          floorMs += performance.now() - b;
        });
        maturations++;
        if (m === TRACES)
          await sql`
            insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, metrics)
            values (${s.row.id}, ${T}, ${S}, ${s.sessionId}, ${TRACES}, now(), now(), ${TRACES}, ${items.length}, '{}'::jsonb)
            on conflict (session_pk) do update set item_count = excluded.item_count`;
      }
    }
    const walPerMaturation = (await walBytes(from)) / maturations;
    await new Promise((r) => setTimeout(r, 600)); // the stats collector flushes every 500 ms
    const st = await tableStats();
    await sql`vacuum full analyze transcript_items`;
    const [size] = await sql<{ bytes: string; items: number }[]>`
      select pg_total_relation_size('transcript_items')::text as bytes, (select count(*)::int from transcript_items) as items`;
    const traces = SESSIONS * TRACES;

    console.log(
      `${name.padEnd(10)} items/trace ${(size.items / traces).toFixed(1)}  stored ${Math.round(Number(size.bytes) / traces)} B/trace` +
        `  | per maturation: rows written ${((Number(st.ins) + Number(st.del)) / maturations).toFixed(1)}, WAL ${Math.round(walPerMaturation)} B,` +
        ` item writes ${ms(writeMs / maturations)} ms (floor select 1: ${ms(floorMs / maturations)} ms)`,
    );
    // The copies stay for the read comparison (main's read on them, interleaved with today's).
    if (name === "copies") {
      await sql`create table transcript_items_copies as select * from transcript_items`;
      await sql`alter table transcript_items_copies add primary key (session_pk, position)`;
    }
  }

  console.log(
    `transcript-items: ${SESSIONS} sessions x ${TRACES} traces, a maturation after each trace (${SESSIONS * TRACES} maturations per shape), ${READS} page reads`,
  );
  await phase("copies", persistCopies);
  await phase("references", persistTranscriptItems);
  await sql`vacuum analyze`;

  // Reads, interleaved so both see the same load: a lean first page of a session as main read it
  // (the session, then one statement over the copies) and as it is read now, and a bare
  // primary-key read of transcript_items as the floor.
  const before: number[] = [];
  const after: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < READS; i++) {
    const s = sessions[(i * 7919) % sessions.length];
    let a = performance.now();
    await loadSession(sql, S, s.sessionId);
    await sql.unsafe(LEAN_BEFORE, [s.row.id], { prepare: true });
    before.push(performance.now() - a);
    a = performance.now();
    await (await readTranscript(sql, S, s.sessionId, { limit: 100, offset: 0, content: "lean" }, 1)).text();
    after.push(performance.now() - a);
    a = performance.now();
    await sql.unsafe(`select position from transcript_items where session_pk = $1 and position = 0`, [s.row.id], {
      prepare: true,
    });
    floor.push(performance.now() - a);
  }
  const p = (xs: number[]) => `${ms(pct(xs, 50))}/${ms(pct(xs, 99))}`;
  console.log(
    `lean page (limit=100) p50/p99 ms: copies ${p(before)}, references ${p(after)}; floor (bare pk read) ${p(floor)}`,
  );
});
