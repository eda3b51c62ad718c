/**
 * `npm run bench:seed`: fills a kept Postgres cluster with stored, matured telemetry quickly, for
 * bench/e2e.ts `--data-dir` (reads and throughput at a given stored size). Adds traces until
 * the cluster holds --traces. Per trace: the realistic 2-6 KB chat payloads the benches ingest
 * (bench/lib/traces.ts, stored as they are: their session_id and times are the template's,
 * the row's columns carry the real ones, so the spans derived from it carry the template's times),
 * where the ids of the spans the processor derives live (`span_ids`, migration 0017), a trace analysis,
 * two transcript items (the request's last message and the response, stored as maturation stores
 * them: references into the payload, docs/analysis.md "Items as references", in one
 * `transcript_runs` row as maturation writes them since migration 0040, not the item rows of the
 * older shape); per 5 traces a matured session with its analysis rollups; 10% of
 * sessions carry a finding under one of 40 issues; and one long conversation, `long-1` (600
 * traces, 1,200 items), the session bench/e2e/reads.ts pages at a random offset. Sessions, traces and findings take the
 * time-ordered ids the code writes since migration 0027, minted at the row's own time
 * (`uuidv7(at - now())`), as a cluster that stored them over --days has them: reads and the
 * ledger's reconciliation bound their scans by id range (its trace count over the last two hours
 * reads the ids of that window), so random ids (what this seed wrote before) made every
 * reconciliation at 3 million read the whole traces table, every 30 s. Rows are generated inside Postgres from 200
 * template payloads (INSERT ... SELECT, no parsing of JSON per row), in chunks of 50,000 traces,
 * ingestion times spread back over --days so retention has something to remove. Then what the
 * platform's newer reads read at that size (bench/lib/seed-newer.ts): the ledger's counts per
 * minute, an evaluator's judgement of every session with its score, reviewers' scores.
 *
 *   bun run bench/seed.ts --data-dir <dir> [--traces 1000000] [--days 30] [--chunk 50000]
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { encodePayload, usageTotals } from "@cellar/shared/db/payload-codec";
import type { TracePayload } from "@cellar/shared/payloads";
import { storedItem } from "@cellar/shared/analysis/transcript-source";
import { buildTranscript, referenceOf } from "../apps/processor/src/analysis/transcript";
import { deriveSpans, spanIdKey } from "../apps/processor/src/ingest/spans";
import { startEmbeddedPostgres } from "../scripts/infra/postgres";
import { fastSettings, readSeedKeys, writeSeedKeys } from "./e2e/cluster";
import { makeTemplates } from "./lib/traces";
import { printStorage, storageReport } from "./lib/storage";
import { seedNewerReads } from "./lib/seed-newer";

const { values: args } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    traces: { type: "string", default: "1000000" },
    days: { type: "string", default: "30" },
    chunk: { type: "string", default: "50000" },
  },
});
if (!args["data-dir"]) throw new Error("--data-dir is required");
const dataDir = resolve(args["data-dir"]);
const TARGET = Number(args.traces);
const DAYS = Number(args.days);
const CHUNK = Number(args.chunk);
const PER_SESSION = 5;
const LONG_TRACES = 600;

/** Sessions numbered first..last, each of `perSession` traces, written in one transaction. */
interface Chunk {
  first: number;
  last: number;
  perSession: number;
  /** Session ids are prefix || number, trace ids prefix || number || '-' || k. */
  prefix: string;
  /** Session g's time: ageDays * (1 - g / newest) days ago; traces 20 s apart inside a session. */
  ageDays: number;
  newest: number;
}

async function writeChunk(c: Chunk, T: string, S: string, templatePayloads: Map<number, TracePayload>) {
  await sql.begin(async (raw) => {
    // SEED_DEBUG=1 prints each statement's time.
    let tq = performance.now();
    const tx = (async (strings: TemplateStringsArray, ...values: unknown[]) => {
      const r = await (raw as any)(strings, ...values);
      if (process.env.SEED_DEBUG)
        console.log(`  ${((performance.now() - tq) / 1000).toFixed(2)} s ${strings[0].trim().slice(0, 50)}`);
      tq = performance.now();
      return r;
    }) as unknown as typeof raw;
    await tx`set local synchronous_commit = off`;
    await tx`create temp table chunk_sessions on commit drop as
      select g, ${c.prefix} || g as session_id, now() - interval '1 day' * ${c.ageDays} * (1 - (g::float8 / ${c.newest})) as at
      from generate_series(${c.first}::int, ${c.last}::int) g`;
    await tx`analyze chunk_sessions`;
    await tx`
      insert into sessions (id, tenant_id, trace_service_id, session_id, environment, status, first_activity_at, last_activity_at, last_ingested_at,
        maturation_count, matured_at, activity_seq, published_count, labels, created_at)
      select uuidv7(at - now()), ${T}, ${S}, session_id, case when g % 3 = 0 then 'prod' else 'staging' end, 'matured', at, at + interval '80 seconds', at + interval '81 seconds',
        1, at + interval '4 minutes', ${c.perSession}, 1, case when g % 10 = 0 then '["vip"]'::jsonb else '[]'::jsonb end, at
      from chunk_sessions`;
    await tx`create temp table chunk_traces on commit drop as
      select s.id as session_pk, c.session_id, c.g, k, c.at + k * interval '20 seconds' as at, ${c.prefix} || c.g || '-' || k as trace_id,
        uuidv7(c.at + k * interval '20 seconds' - now()) as id, k * 2 as position,
        (c.g * 7 + k * 13) % 200 as tk
      from chunk_sessions c join sessions s on s.trace_service_id = ${S} and s.session_id = c.session_id
      cross join generate_series(0, ${c.perSession - 1}) k`;
    await tx`analyze chunk_traces`;
    // Since migration 0017 a trace's spans are derived from its payload when read; only where each
    // span id lives is stored: since migration 0022 as the trace row's `span_keys` (the ids the
    // processor derives from the row's trace id).
    const spanTraces: string[] = [];
    const spanKeys: string[] = [];
    for (let g = c.first; g <= c.last; g++)
      for (let k = 0; k < c.perSession; k++) {
        const traceId = `${c.prefix}${g}-${k}`;
        for (const sp of deriveSpans(traceId, templatePayloads.get((g * 7 + k * 13) % 200)!)) {
          spanTraces.push(traceId);
          spanKeys.push(spanIdKey(sp.spanId)!);
        }
      }
    await tx`create temp table chunk_keys on commit drop as
      select trace_id, array_agg(span_id order by n) as span_keys
      from unnest(${spanTraces}::text[], ${spanKeys}::int8[]) with ordinality as x(trace_id, span_id, n) group by trace_id`;
    await tx`
      insert into traces (id, tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
        prompt_tokens, completion_tokens, total_tokens, awaits_messages, received_at, ingested_at, span_keys)
      select c.id, ${T}, ${S}, c.session_pk, c.trace_id, c.session_id, 'bench', 'openai', 'gpt-4o-mini', c.at, c.at + interval '900 ms',
        (t.usage->>'prompt')::bigint, (t.usage->>'completion')::bigint, (t.usage->>'total')::bigint, false,
        c.at, c.at, sk.span_keys
      from chunk_traces c join seed_templates t on t.k = c.tk left join chunk_keys sk on sk.trace_id = c.trace_id`;
    await tx`
      insert into trace_payloads (trace_pk, tenant_id, payload_z)
      select c.id, ${T}, t.payload_z from chunk_traces c join seed_templates t on t.k = c.tk`;
    // Matured and published (migration 0016): no pending row; the analysis' time is the maturation time.
    // Metrics as the processor stores a one-call trace's (migration 0021): what differs from the
    // base its trace row gives (every third trace called a tool), the rest rebuilt when read.
    await tx`
      insert into trace_analyses (trace_pk, tenant_id, trace_service_id, trace_id, computed_at, cost_usd, metrics_delta)
      select id, ${T}, ${S}, trace_id, at + interval '4 minutes', 0.0003 + (g % 50) / 1e5,
        case when tk % 3 = 0 then '{"toolCalls": 1}'::jsonb end
      from chunk_traces`;
    // Transcript items as maturation writes them since migration 0040: one run per trace (its two
    // items, an element each, in the order shared/analysis/transcript-rows.ts reads), digest null
    // (a re-maturation rewrites it). Span ids as the seeded spans have them (md5, not the
    // processor's): a full read of a seeded item derives empty span attributes, a lean read (the
    // benches') never derives them.
    await tx`
      insert into transcript_runs (session_pk, position, tenant_id, last_position, item_ids, items, digest)
      select c.session_pk, c.position, ${T}, c.position + 1, r.item_ids, r.items, null
      from chunk_traces c join seed_templates t on t.k = c.tk cross join lateral (
        select array_agg(el.e->>1 order by i.n) as item_ids, jsonb_agg(el.e order by i.n) as items
        from jsonb_array_elements(t.items) with ordinality i(x, n) cross join lateral (select jsonb_build_array(
          c.position + i.n - 1, 'itm_' || left(md5(c.trace_id || i.n), 16), i.x->>'kind', i.x->>'role',
          case when (i.x->>'response')::boolean then c.at + interval '900 ms' else c.at end, c.trace_id,
          md5(c.trace_id || case when (i.x->>'response')::boolean then (t.spans->1->>'suffix') else (t.spans->0->>'suffix') end),
          i.x->'item', c.id, i.x->>'source') as e) el) r`;
    await tx`
      insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at,
        through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, latency_p95_ms, metrics)
      select s.id, ${T}, ${S}, c.session_id, 1, c.at + interval '4 minutes', c.at + interval '81 seconds', ${c.perSession}, ${c.perSession * 2}, false,
        80000 + (c.g % 600) * 100, ${c.perSession}, ${c.perSession}, c.g % 7, 3000 + (c.g * 37) % 40000, (c.g % 23 = 0)::int, (c.g % 10 = 0)::int,
        ((c.g * 37) % 40000) / 1e6, (c.g * 13) % 5000, jsonb_build_object('turns', ${c.perSession}::int, 'latencyP95Ms', (c.g * 13) % 5000, 'totalTokens', 3000 + (c.g * 37) % 40000)
      from chunk_sessions c join sessions s on s.trace_service_id = ${S} and s.session_id = c.session_id`;
    await tx`
      insert into findings (id, tenant_id, trace_service_id, session_pk, session_id, issue_id, trace_id, detector, fingerprint, severity, title, evidence, occurred_at, created_at)
      select uuidv7(c.at - now()), ${T}, ${S}, s.id, c.session_id, i.id, c.session_id || '-0', i.detector, i.fingerprint, i.severity, i.title, '{"note": "seeded"}'::jsonb, c.at, c.at
      from chunk_sessions c join sessions s on s.trace_service_id = ${S} and s.session_id = c.session_id
      join issues i on i.trace_service_id = ${S} and i.fingerprint = 'seed-' || (c.g % 40 + 1)
      where c.g % 10 = 0`;
  });
}

const pg = await startEmbeddedPostgres({ dataDir, persistent: true });
const database = createDatabase(pg.url, { max: 2 });
const { sql } = database;
try {
  await fastSettings(sql);
  await runMigrations(pg.url);
  if (!existsSync(`${dataDir}.keys.json`)) {
    const t = await bootstrapTenant(database.db, { name: "seeded", plan: "pro" });
    await createService(database.db, { tenantId: t.tenantId, name: "support-bot" });
    writeSeedKeys(dataDir, {
      tenantId: t.tenantId,
      telemetryKey: t.telemetryKey,
      platformKey: t.platformKey,
      service: "support-bot",
    });
  }
  const keys = readSeedKeys(dataDir);
  const [svc] = await sql<
    { id: string }[]
  >`select id from trace_services where tenant_id = ${keys.tenantId} and name = ${keys.service}`;
  const T = keys.tenantId;
  const S = svc.id;

  // Templates: the payload and the spans the processor derives from it (ids made per row below).
  await sql`create table if not exists seed_templates (k int primary key, payload jsonb not null, spans jsonb not null)`;
  const [{ n: haveTemplates }] = await sql<{ n: number }[]>`select count(*)::int as n from seed_templates`;
  if (haveTemplates === 0) {
    const rows = makeTemplates(200).map((text, k) => {
      const p = JSON.parse(text.replace("__SESSION__", "seed")) as TracePayload;
      const spans = deriveSpans("seedtrace", p).map((s) => ({
        suffix: s.spanId,
        parent: s.parentSpanId,
        name: s.name,
        kind: s.kind,
        ms: s.endTime.getTime() - s.startTime.getTime(),
        attributes: s.attributes,
      }));
      return { k, payload: p, spans };
    });
    await sql`insert into seed_templates ${sql(rows.map((r) => ({ k: r.k, payload: sql.json(r.payload as never), spans: sql.json(r.spans as never) })) as never)}`;
  }
  // The stored shape since migration 0015: the payload deflated by the app, token sums as columns.
  await sql`alter table seed_templates add column if not exists payload_z bytea, add column if not exists usage jsonb`;
  for (const t of await sql<
    { k: number; payload: TracePayload }[]
  >`select k, payload from seed_templates where payload_z is null`)
    await sql`update seed_templates set payload_z = ${encodePayload(t.payload)}, usage = ${sql.json(usageTotals(t.payload))} where k = ${t.k}`;
  // The two transcript rows of a trace as maturation stores them: the request's last message and
  // the response, each a reference into the payload with what only maturation knows.
  await sql`alter table seed_templates add column if not exists items jsonb`;
  for (const t of await sql<
    { k: number; payload: TracePayload }[]
  >`select k, payload from seed_templates where items is null`) {
    const p = t.payload as unknown as Record<string, any>;
    const { items } = buildTranscript(
      [
        {
          traceId: "seedtrace",
          pk: "seed",
          startTime: new Date(p.start_time),
          endTime: new Date(p.end_time),
          payload: p,
        },
      ],
      [],
    );
    const last = `req:${p.request.messages.length - 1}`;
    const rows = items
      .filter((i) => [last, "res:0"].includes(referenceOf(i)?.source ?? ""))
      .map((i) => ({
        kind: i.type,
        role: i.role,
        source: referenceOf(i)!.source,
        response: referenceOf(i)!.source === "res:0",
        item: storedItem(i, referenceOf(i)),
      }));
    await sql`update seed_templates set items = ${sql.json(rows as never)} where k = ${t.k}`;
  }
  const templatePayloads = new Map(
    (await sql<{ k: number; payload: TracePayload }[]>`select k, payload from seed_templates`).map((t) => [
      t.k,
      t.payload,
    ]),
  );
  // Issues the seeded findings point at.
  await sql`
    insert into issues (tenant_id, trace_service_id, fingerprint, detector, title, severity, first_seen_at, last_seen_at, occurrences, affected_sessions)
    select ${T}, ${S}, 'seed-' || g, (array['tool_error','long_latency','refusal','loop'])[g % 4 + 1], 'Seeded issue ' || g, (array['low','medium','high'])[g % 3 + 1],
      now() - interval '30 days', now(), 0, 0
    from generate_series(1, 40) g on conflict do nothing`;

  const [{ n: start }] = await sql<{ n: number }[]>`select count(*)::int as n from traces`;
  // Numbering continues after the highest seeded session (retention may have removed older ones).
  const [{ n: seededSessions }] = await sql<
    { n: number }[]
  >`select coalesce(max(substr(session_id, 6)::int), 0)::int as n from sessions where session_id like 'seed-%'`;
  let sessionNo = seededSessions;
  const t0 = performance.now();
  let stored = start;
  console.log(
    `seed: ${start.toLocaleString("en")} traces stored; adding ${Math.max(0, TARGET - start).toLocaleString("en")}`,
  );
  while (stored < TARGET) {
    const traces = Math.min(CHUNK, TARGET - stored);
    const sessions = Math.ceil(traces / PER_SESSION);
    const first = sessionNo + 1;
    const last = sessionNo + sessions;
    const newest = Math.max(last, TARGET / PER_SESSION);
    await writeChunk(
      { first, last, perSession: PER_SESSION, prefix: "seed-", ageDays: DAYS, newest },
      T,
      S,
      templatePayloads,
    );
    sessionNo = last;
    stored += sessions * PER_SESSION;
    const secs = (performance.now() - t0) / 1000;
    console.log(`seed: ${stored.toLocaleString("en")} traces (${Math.round((stored - start) / secs)}/s)`);
  }
  // One long conversation, 'long-1' (LONG_TRACES traces of two items, a day old): the session
  // bench/e2e/reads.ts pages at a random offset (a seeded session's ten items are one page).
  const [{ n: haveLong }] = await sql<
    { n: number }[]
  >`select count(*)::int as n from sessions where session_id = 'long-1'`;
  if (haveLong === 0) {
    await writeChunk(
      { first: 1, last: 1, perSession: LONG_TRACES, prefix: "long-", ageDays: 1, newest: 2 },
      T,
      S,
      templatePayloads,
    );
    stored += LONG_TRACES;
    console.log(`seed: long-1, ${LONG_TRACES} traces (${LONG_TRACES * 2} items)`);
  }
  await sql`update issues i set occurrences = f.n, affected_sessions = f.n from (select issue_id, count(*)::int as n from findings group by issue_id) f where f.issue_id = i.id`;
  await seedNewerReads(sql, { tenantId: T, serviceId: S, service: keys.service, days: DAYS, traces: stored });
  printStorage(await storageReport(sql));
  const [{ bytes }] = await sql<{ bytes: string }[]>`select pg_database_size(current_database())::text as bytes`;
  console.log(`seed: done, ${stored.toLocaleString("en")} traces; database ${(Number(bytes) / 1e9).toFixed(2)} GB`);
} finally {
  await database.close();
  await pg.stop();
}
process.exit(0);
