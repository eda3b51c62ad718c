/**
 * `bun run bench/trace-state.ts [--traces 20000]`: Postgres execution time per trace of a trace's
 * lifecycle statements (insert, maturation state, publish recorded), before and after
 * migration 0016 (immutable trace rows, state in `pending_traces`), from pg_stat_statements, in
 * one Postgres: two databases, one migrated up to 0015 and driven by the statements main ran,
 * one fully migrated and driven by shared/maturation/state.ts. The floor, in the same run: the
 * same rows inserted into a copy of `traces` with no index, key or default (nothing but the heap).
 * Batches as the processor forms them: 500 traces per write, matured as one batch key, then
 * their publishes recorded; the three take turns in four rounds (a shared machine's load moves).
 * The trace analysis insert (the same in both) is left out.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { MIGRATIONS_DIR, runMigrations } from "@cellar/shared/db/client";
import * as state from "@cellar/shared/maturation/state";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { fastSettings } from "./e2e/cluster";

const { values: args } = parseArgs({ options: { traces: { type: "string", default: "20000" } } });
const TRACES = Number(args.traces);
const BATCH = 500;

type Shape = "before" | "after" | "floor";
const INSERT_COLUMNS = `tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
  prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at`;

async function seed(sql: postgres.Sql) {
  const [tenant] = await sql`insert into tenants (name, plan) values ('bench', 'pro') returning id`;
  const [project] = await sql`insert into projects (tenant_id, name) values (${tenant.id}, 'bench') returning id`;
  const [svc] =
    await sql`insert into trace_services (tenant_id, project_id, name) values (${tenant.id}, ${project.id}, 'bench-bot') returning id`;
  const sessions = await sql<{ id: string; session_id: string }[]>`
    insert into sessions (tenant_id, trace_service_id, session_id, first_activity_at, last_activity_at, last_ingested_at)
    select ${tenant.id}, ${svc.id}, 's-' || g, now(), now(), now() from generate_series(1, 200) g returning id, session_id`;
  return { tenantId: tenant.id as string, serviceId: svc.id as string, sessions };
}

function rows(ctx: Awaited<ReturnType<typeof seed>>, from: number) {
  return Array.from({ length: BATCH }, (_, i) => {
    const s = ctx.sessions[(from + i) % ctx.sessions.length];
    const at = new Date(Date.now() - 60_000 + i).toISOString();
    return {
      tenant_id: ctx.tenantId,
      trace_service_id: ctx.serviceId,
      session_pk: s.id,
      trace_id: `tr-${from + i}`,
      session_id: s.session_id,
      environment: "bench",
      provider: "openai",
      model: "gpt-4o-mini",
      start_time: at,
      end_time: at,
      prompt_tokens: 120,
      completion_tokens: 40,
      total_tokens: 160,
      awaits_messages: false,
      received_at: at,
    };
  });
}

/** One trace's life, batch by batch, in the given shape. */
async function drive(
  sql: postgres.Sql,
  shape: Shape,
  ctx: Awaited<ReturnType<typeof seed>>,
  first: number,
  end: number,
) {
  const table = sql(shape === "floor" ? "traces_floor" : "traces");
  for (let from = first; from < end; from += BATCH) {
    const batch = rows(ctx, from);
    const inserted = await sql.begin(async (tx) => {
      const inserted = await tx<{ id: string; ingested_key: string }[]>`
        insert into ${table} (${tx.unsafe(INSERT_COLUMNS)})
        select ${tx.unsafe(INSERT_COLUMNS)} from json_to_recordset(${JSON.stringify(batch)}::text::json) as x(tenant_id uuid, trace_service_id uuid,
          session_pk uuid, trace_id text, session_id text, environment text, provider text, model text, start_time timestamptz, end_time timestamptz,
          prompt_tokens bigint, completion_tokens bigint, total_tokens bigint, awaits_messages boolean, received_at timestamptz)
        order by trace_service_id, trace_id
        on conflict do nothing returning id, ingested_at::text as ingested_key`;
      if (shape === "after")
        await state.openTraces(
          tx,
          inserted.map((r) => ({ trace_pk: r.id, tenant_id: ctx.tenantId })),
        );
      return inserted;
    });
    const ids = inserted.map((r) => r.id);
    if (shape === "floor") continue;
    let keys: Array<{ pk: string; ingestedKey: string }> = [];
    await sql.begin(async (tx) => {
      if (shape === "after") {
        // The claim locks and matures in one statement (selectMaturing only for what it leaves).
        keys = (
          await state.matureTraces(
            tx,
            inserted.map((r) => ({ pk: r.id, ingestedKey: r.ingested_key })),
            0,
          )
        ).map((r) => ({ pk: r.trace_pk, ingestedKey: r.ingested_key }));
      } else {
        // main before migration 0016: selectMaturing's trace lock, matureTraces.
        await tx`
          select t.id, t.tenant_id, t.trace_service_id, t.session_id, t.status, t.maturation_count, t.matured_at, t.published_count,
            ts.name as service_name, t.trace_id, t.ingested_at <= now() as idle
          from traces t join trace_services ts on ts.id = t.trace_service_id
          where t.id = any(${tx.array(ids)}::uuid[]) order by t.id for no key update of t`;
        await tx`
          update traces set status = 'matured', maturation_count = 1, matured_at = now() where id = any(${tx.array(ids)}::uuid[])
          returning id, tenant_id, trace_service_id, trace_id, session_id, status, maturation_count, matured_at`;
      }
    });
    if (shape === "after") await state.recordPublished(sql, [], keys);
    else
      await sql`
        with locked as (select id from traces where id = any(${sql.array(ids)}::uuid[]) order by id for update)
        update traces set published_count = 1 where id in (select id from locked)`;
  }
}

async function main() {
  const scratch = mkdtempSync(join(tmpdir(), "cellar-bench-trace-state-"));
  const dataDir = join(scratch, "pg");
  let pg = await startEmbeddedPostgres({ dataDir, persistent: true });
  try {
    let admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin`alter system set shared_preload_libraries = 'pg_stat_statements'`;
    await admin.end();
    await pg.stop();
    pg = await startEmbeddedPostgres({ dataDir, persistent: true });
    admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await fastSettings(admin);
    const urls: Record<Shape, string> = { before: "", after: "", floor: "" };
    for (const shape of ["before", "after"] as const) {
      await admin.unsafe(`create database ts_${shape}`);
      const url = new URL(pg.url);
      url.pathname = `/ts_${shape}`;
      urls[shape] = url.toString();
    }
    urls.floor = urls.after;
    // Before: the migrations up to 0015 (the shape main writes).
    const dir = join(scratch, "migrations-0015");
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const journal = JSON.parse(readFileSync(join(dir, "meta/_journal.json"), "utf8"));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < 16);
    writeFileSync(join(dir, "meta/_journal.json"), JSON.stringify(journal));
    const migrator = postgres(urls.before, { max: 1, onnotice: () => {} });
    await migrate(drizzle(migrator), { migrationsFolder: dir });
    await migrator.end();
    const before = postgres(urls.before, { max: 2, onnotice: () => {} });
    await runMigrations(urls.after);
    const after = postgres(urls.after, { max: 2, onnotice: () => {} });
    await after`create table traces_floor (like traces including defaults)`;
    await admin`create extension if not exists pg_stat_statements`;

    const sqlOf: Record<Shape, postgres.Sql> = { before, after, floor: after };
    const perTrace: Record<Shape, Array<{ query: string; calls: number; us: number }>> = {
      before: [],
      after: [],
      floor: [],
    };
    const ctxOf = new Map<Shape, Awaited<ReturnType<typeof seed>>>();
    for (const shape of ["floor", "before", "after"] as const) {
      ctxOf.set(shape, await seed(sqlOf[shape]));
      await drive(sqlOf[shape], shape, ctxOf.get(shape)!, 0, 2_000); // warm-up, not counted
    }
    // The three shapes take turns (load on a shared machine changes by the minute).
    await admin`select pg_stat_statements_reset()`;
    const ROUNDS = 4;
    for (let round = 0; round < ROUNDS; round++)
      for (const shape of ["floor", "before", "after"] as const) {
        const from = 2_000 + (round * TRACES) / ROUNDS;
        await drive(sqlOf[shape], shape, ctxOf.get(shape)!, from, from + TRACES / ROUNDS);
      }
    for (const shape of ["floor", "before", "after"] as const) {
      const stats = await admin<{ query: string; calls: number; ms: number }[]>`
        select query, calls::int, total_exec_time::float8 as ms from pg_stat_statements
        where dbid = (select oid from pg_database where datname = ${`ts_${shape === "floor" ? "after" : shape}`})
          and query ~* '(insert into|update|delete from|for (no key )?update)'
          and query ~* ${shape === "floor" ? "traces_floor" : shape === "before" ? "traces" : '(insert into "traces"|pending_traces)'}
          and query !~* 'insert into (tenants|projects|trace_services|sessions)'
        order by total_exec_time desc`;
      perTrace[shape] = stats.map((s) => ({
        query: s.query.replace(/\s+/g, " ").slice(0, 100),
        calls: s.calls,
        us: (s.ms * 1000) / TRACES,
      }));
    }
    // How many of the updates stayed HOT (no index entry written): the old trace row, the new pending row.
    await new Promise((r) => setTimeout(r, 1_500)); // table stats are flushed about every second
    const hot = async (sql: postgres.Sql, table: string) => {
      const [r] = await sql<{ upd: number; hot: number }[]>`
        select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = ${table}`;
      return `${table}: ${r.hot} of ${r.upd} updates HOT`;
    };
    const hotLines = [await hot(before, "traces"), await hot(after, "pending_traces")];
    const total = (shape: Shape) => perTrace[shape].reduce((a, s) => a + s.us, 0);
    const floor = total("floor");
    console.log(
      `trace lifecycle, Postgres execution per trace (pg_stat_statements), ${TRACES} traces in batches of ${BATCH}:`,
    );
    for (const shape of ["floor", "before", "after"] as const) {
      console.log(`  ${shape}: ${total(shape).toFixed(1)} us/trace = ${(total(shape) / floor).toFixed(2)}x the floor`);
      for (const s of perTrace[shape])
        console.log(`    ${s.us.toFixed(1).padStart(6)} us  ${s.calls} calls  ${s.query}`);
    }
    console.log(`  ${hotLines.join("; ")} (warm-up included)`);
    await before.end();
    await after.end();
    await admin.end();
  } finally {
    await pg.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
