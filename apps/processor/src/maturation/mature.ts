import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { Topology } from "@cellar/shared/nats/topology";
import { maturedStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import { maturationKey, type MaturedMessage } from "@cellar/shared/payloads";
import type { Logger } from "@cellar/shared/logger";
import { analyzeSessions, analyzeTraces, persistSessionAnalyses, persistTraceAnalyses, type SessionAnalysis } from "../analysis/session";
import type { LatencyNorms } from "../analysis/detectors";
import { llmTldr, type SummaryLlm } from "../analysis/tldr";

export interface MaturationDeps {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  windowSeconds: number;
  /** Test hook: runs after the Postgres commit and before the MATURED publish. */
  afterCommit?: (message: MaturedMessage) => Promise<void> | void;
  /** The service's latency norms (latency-outlier detector); without it that detector is off. */
  latencyNorms?: (traceServiceId: string) => Promise<LatencyNorms>;
  /** OpenAI-compatible endpoint for AI-written TL;DRs; extractive only without it. */
  summaryLlm?: SummaryLlm;
}

/**
 * Webhook delivery history, and with it the dedup record, is kept 30 days; a maturation after
 * that restarts the count at 1 (contract: Delivery rules 7). The new event stays distinct from
 * the old one because maturationKey() carries the maturation time.
 */
export const COUNT_RESTART_AFTER = "30 days";

/** `republished`: committed earlier but its MATURED publish was still owed (crash replay). */
export type MaturationOutcome = "matured" | "republished" | "already-published" | "still-active" | "missing";

/** Outcome per entity; `dueInMs`: for still-active ones, how long until they are idle for the window. */
export type Outcomes = Map<string, MaturationOutcome> & { dueInMs: Map<string, number> };
const newOutcomes = (ids: string[]): Outcomes => Object.assign(new Map(ids.map((id) => [id, "missing" as MaturationOutcome])), { dueInMs: new Map<string, number>() });
const owed = (row: { maturation_count: number; published_count?: number }) => Number(row.published_count ?? 0) < Number(row.maturation_count);

/** Locked rows -> due for maturation, or an outcome now (a matured row may still owe its publish). */
function triage<R extends SessionRow | TraceRow>(locked: R[], outcomes: Outcomes, message: (row: R) => MaturedMessage) {
  const republish: MaturedMessage[] = [];
  const due: R[] = [];
  for (const row of locked) {
    if (row.status === "matured") {
      outcomes.set(row.id, owed(row) ? "republished" : "already-published");
      if (owed(row)) republish.push(message(row));
      continue;
    }
    // Reopened while its last maturation's publish is still owed (Postgres or NATS failed after
    // the commit): publish it now, before a new maturation overwrites count and time (the
    // chaos run lost session.matured #1 this way). Same message id as the lost one.
    if (owed(row) && row.matured_at) republish.push(message(row));
    if (!row.idle) {
      outcomes.set(row.id, "still-active");
      outcomes.dueInMs.set(row.id, Math.max(0, Number(row.due_in_ms ?? 0)));
    }
    else due.push(row);
  }
  return { republish, due };
}

/**
 * Matures the sessions of a batch that have really been idle for the window. Analysis,
 * materialization and `maturation_count + 1` commit in one transaction under row locks (taken
 * in id order: no deadlock with another processor); multi-row statements, so a burst of
 * markers costs a few statements per batch, not per session. The MATURED publishes come after
 * the commit with message id entity + count, so a crash between the two and a replay publish
 * each event once.
 */
export async function matureSessions(deps: MaturationDeps, sessionPks: string[]): Promise<Outcomes> {
  const ids = [...new Set(sessionPks)];
  const outcomes = newOutcomes(ids);
  const result = await deps.sql.begin(async (tx) => {
    const locked = await tx<SessionRow[]>`
      select s.id, s.tenant_id, s.trace_service_id, s.session_id, s.status, s.maturation_count, s.matured_at, s.published_count, ts.name as service_name,
        s.last_ingested_at <= now() - make_interval(secs => ${deps.windowSeconds}) as idle,
        extract(epoch from s.last_ingested_at + make_interval(secs => ${deps.windowSeconds}) - now())::float8 * 1000 as due_in_ms
      from sessions s join trace_services ts on ts.id = s.trace_service_id
      where s.id = any(${tx.array(ids)}::uuid[]) order by s.id for no key update of s`;
    const { republish, due } = triage(locked, outcomes, sessionMessage);
    if (due.length === 0) return { republish, matured: [] };
    const analyses = await analyzeSessions(tx, due, { latencyNorms: deps.latencyNorms });
    const updated = await tx<SessionRow[]>`
      update sessions set status = 'matured', matured_at = now(),
        maturation_count = case when matured_at < now() - ${COUNT_RESTART_AFTER}::interval then 1 else maturation_count + 1 end,
        published_count = case when matured_at < now() - ${COUNT_RESTART_AFTER}::interval then 0 else published_count end
      where id = any(${tx.array(due.map((s) => s.id))}::uuid[])
      returning id, tenant_id, trace_service_id, session_id, status, maturation_count, matured_at`;
    const before = new Map(due.map((s) => [s.id, s]));
    const list = updated.map((u) => ({ row: { ...u, service_name: before.get(u.id)!.service_name }, analysis: analyses.get(u.id)!, replace: before.get(u.id)!.maturation_count > 0 }));
    await persistSessionAnalyses(tx, list);
    for (const m of list) outcomes.set(m.row.id, "matured");
    return { republish, matured: list };
  });
  if (deps.summaryLlm && result.matured.length) {
    await mapLimit(result.matured, 4, (m) => writeLlmTldr(deps, sessionMessage(m.row), m.analysis));
  }
  await publishAll(deps, [...result.republish, ...result.matured.map((m) => sessionMessage(m.row))]);
  return outcomes;
}

/** Replaces the extractive TL;DR with an AI-written one (after commit: no row lock held while waiting). */
async function writeLlmTldr(deps: MaturationDeps, message: MaturedMessage, analysis: SessionAnalysis): Promise<void> {
  const text = await llmTldr(deps.summaryLlm!, analysis.tldrFacts, analysis.tldr, deps.logger);
  if (!text) return;
  await deps.sql`
    update session_analyses set tldr = ${text}, tldr_source = 'llm'
    where session_pk = ${message.entityPk} and maturation_count = ${message.maturationCount}`;
}

/** Traces mature once (count 1); a trace seen again is the same event, never a second one. */
export async function matureTraces(deps: MaturationDeps, tracePks: string[]): Promise<Outcomes> {
  const ids = [...new Set(tracePks)];
  const outcomes = newOutcomes(ids);
  const result = await deps.sql.begin(async (tx) => {
    const locked = await tx<TraceRow[]>`
      select t.id, t.tenant_id, t.trace_service_id, t.trace_id, t.session_id, t.status, t.maturation_count, t.matured_at, t.published_count, ts.name as service_name,
        t.ingested_at <= now() - make_interval(secs => ${deps.windowSeconds}) as idle,
        extract(epoch from t.ingested_at + make_interval(secs => ${deps.windowSeconds}) - now())::float8 * 1000 as due_in_ms
      from traces t join trace_services ts on ts.id = t.trace_service_id
      where t.id = any(${tx.array(ids)}::uuid[]) order by t.id for no key update of t`;
    const { republish, due } = triage(locked, outcomes, traceMessage);
    if (due.length === 0) return { republish, matured: [] as TraceRow[] };
    const analyses = await analyzeTraces(tx, due);
    const updated = await tx<TraceRow[]>`
      update traces set status = 'matured', maturation_count = 1, matured_at = now() where id = any(${tx.array(due.map((t) => t.id))}::uuid[])
      returning id, tenant_id, trace_service_id, trace_id, session_id, status, maturation_count, matured_at`;
    const before = new Map(due.map((t) => [t.id, t]));
    const rows = updated.map((u) => ({ ...u, service_name: before.get(u.id)!.service_name }));
    await persistTraceAnalyses(tx, rows.map((row) => ({ row, analysis: analyses.get(row.id)! })));
    for (const r of rows) outcomes.set(r.id, "matured");
    return { republish, matured: rows };
  });
  await publishAll(deps, [...result.republish, ...result.matured.map(traceMessage)]);
  return outcomes;
}

/** Active traces inserted by the write whose transaction time is `micros` (a batch key). */
export async function tracesOfBatch(sql: postgres.Sql, micros: string): Promise<string[]> {
  if (!/^\d{1,20}$/.test(micros)) return [];
  const rows = await sql<{ id: string }[]>`
    select id from traces where status = 'active' and ingested_at = timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond'`;
  return rows.map((r) => r.id);
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/**
 * Publishes with msgID entity + count + maturation time (the stream drops a second copy within its duplicate
 * window), then records the publishes so neither a stale marker nor the sweep publishes them
 * again later. A crash between publish and record replays into a deduplicated publish.
 */
export async function publishAll(deps: MaturationDeps, messages: MaturedMessage[]): Promise<void> {
  if (messages.length === 0) return;
  for (const m of messages) await deps.afterCommit?.(m);
  await Promise.all(messages.map((message) => publish(deps.js, deps.topology, maturedStream, message, { msgID: maturationKey(message) })));
  const sessions = messages.filter((m) => m.type === "session.matured").map((m) => ({ pk: m.entityPk, count: m.maturationCount }));
  const traces = messages.filter((m) => m.type === "trace.matured").map((m) => m.entityPk);
  // Rows locked in id order, like the maturation transactions (no deadlock with them).
  if (sessions.length) {
    await deps.sql`
      with x as (select * from jsonb_to_recordset(${deps.sql.json(sessions as any)}::jsonb) as x(pk uuid, count int)),
        locked as (select s.id from sessions s join x on s.id = x.pk order by s.id for no key update of s)
      update sessions s set published_count = greatest(s.published_count, x.count) from x where s.id = x.pk and s.id in (select id from locked)`;
  }
  if (traces.length) {
    await deps.sql`
      with locked as (select id from traces where id = any(${deps.sql.array(traces)}::uuid[]) order by id for no key update)
      update traces set published_count = 1 where id in (select id from locked)`;
  }
}

/** A session or trace row as the maturation queries select it. */
interface MaturingRow {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  session_id: string;
  status: "active" | "matured";
  maturation_count: number;
  matured_at: Date | null;
  published_count?: number;
  service_name: string;
  idle?: boolean;
  due_in_ms?: number;
}
export type SessionRow = MaturingRow;
export interface TraceRow extends MaturingRow {
  trace_id: string;
}

export function sessionMessage(s: SessionRow): MaturedMessage {
  return {
    type: "session.matured", tenantId: s.tenant_id, traceServiceId: s.trace_service_id, serviceName: s.service_name,
    entityPk: s.id, sessionId: s.session_id, maturationCount: s.maturation_count, occurredAt: new Date(s.matured_at!).toISOString(),
  };
}
export function traceMessage(t: TraceRow): MaturedMessage {
  return {
    type: "trace.matured", tenantId: t.tenant_id, traceServiceId: t.trace_service_id, serviceName: t.service_name,
    entityPk: t.id, traceId: t.trace_id, maturationCount: 1, occurredAt: new Date(t.matured_at!).toISOString(),
  };
}
