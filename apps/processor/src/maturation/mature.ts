import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import { subjects, type Topology } from "../../../../shared/nats/topology";
import type { MaturedMessage } from "../../../../shared/payloads";
import type { Logger } from "../../../../shared/logger";
import { analyzeSession, persistSessionAnalysis, analyzeTrace, persistTraceAnalysis, type SessionAnalysis } from "../analysis/session";
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

/** `republished`: committed earlier but its MATURED publish was still owed (crash replay). */
export type MaturationOutcome = "matured" | "republished" | "already-published" | "still-active" | "missing";

/**
 * Matures one session if it has really been idle for the window. Analysis, materialization and
 * `maturation_count + 1` commit in one transaction under a row lock; the MATURED publish comes
 * after, with a message id of entity + count, so a crash between the two and a replay publishes
 * the same event once.
 */
export async function matureSession(deps: MaturationDeps, sessionPk: string): Promise<MaturationOutcome> {
  const result = await deps.sql.begin(async (tx) => {
    const [s] = await tx<SessionRow[]>`
      select s.id, s.tenant_id, s.trace_service_id, s.session_id, s.status, s.maturation_count, s.matured_at, s.published_count, ts.name as service_name,
        s.last_ingested_at <= now() - make_interval(secs => ${deps.windowSeconds}) as idle
      from sessions s join trace_services ts on ts.id = s.trace_service_id
      where s.id = ${sessionPk} for update of s`;
    if (!s) return { outcome: "missing" as const };
    if (s.status === "matured") return owed(s) ? { outcome: "republished" as const, message: sessionMessage(s) } : { outcome: "already-published" as const };
    if (!s.idle) return { outcome: "still-active" as const };
    const analysis = await analyzeSession(tx, s, { latencyNorms: deps.latencyNorms });
    const [updated] = await tx<SessionRow[]>`
      update sessions set status = 'matured', maturation_count = maturation_count + 1, matured_at = now()
      where id = ${s.id}
      returning id, tenant_id, trace_service_id, session_id, status, maturation_count, matured_at`;
    const row = { ...updated, service_name: s.service_name };
    await persistSessionAnalysis(tx, row, analysis, s.maturation_count > 0);
    return { outcome: "matured" as const, message: sessionMessage(row), analysis };
  });
  if (result.outcome === "matured" && deps.summaryLlm) await writeLlmTldr(deps, result.message, result.analysis);
  if (result.outcome === "matured" || result.outcome === "republished") await publishMatured(deps, result.message);
  return result.outcome;
}

/** Replaces the extractive TL;DR with an AI-written one (after commit: no row lock held while waiting). */
async function writeLlmTldr(deps: MaturationDeps, message: MaturedMessage, analysis: SessionAnalysis): Promise<void> {
  const text = await llmTldr(deps.summaryLlm!, analysis.tldrFacts, analysis.tldr, deps.logger);
  if (!text) return;
  await deps.sql`
    update session_analyses set tldr = ${text}, tldr_source = 'llm'
    where session_pk = ${message.entityPk} and maturation_count = ${message.maturationCount}`;
}

const owed = (row: { maturation_count: number; published_count?: number }) => Number(row.published_count ?? 0) < Number(row.maturation_count);

/** Traces mature once (count 1); a trace seen again is the same event, republished idempotently. */
export async function matureTrace(deps: MaturationDeps, tracePk: string): Promise<MaturationOutcome> {
  const result = await deps.sql.begin(async (tx) => {
    const [t] = await tx<TraceRow[]>`
      select t.id, t.tenant_id, t.trace_service_id, t.trace_id, t.session_id, t.status, t.maturation_count, t.matured_at, t.published_count, ts.name as service_name,
        t.ingested_at <= now() - make_interval(secs => ${deps.windowSeconds}) as idle
      from traces t join trace_services ts on ts.id = t.trace_service_id
      where t.id = ${tracePk} for update of t`;
    if (!t) return { outcome: "missing" as const };
    if (t.status === "matured") return owed(t) ? { outcome: "republished" as const, message: traceMessage(t) } : { outcome: "already-published" as const };
    if (!t.idle) return { outcome: "still-active" as const };
    const analysis = await analyzeTrace(tx, t);
    const [updated] = await tx<TraceRow[]>`
      update traces set status = 'matured', maturation_count = 1, matured_at = now() where id = ${t.id}
      returning id, tenant_id, trace_service_id, trace_id, session_id, status, maturation_count, matured_at`;
    const row = { ...updated, service_name: t.service_name };
    await persistTraceAnalysis(tx, row, analysis);
    return { outcome: "matured" as const, message: traceMessage(row) };
  });
  if (result.outcome === "matured" || result.outcome === "republished") await publishMatured(deps, result.message);
  return result.outcome;
}

/**
 * Publishes with msgID entity + count (the stream drops a second copy within its duplicate
 * window), then records the publish so neither a stale marker nor the sweep publishes it again
 * later. A crash between publish and record replays into a deduplicated publish.
 */
export async function publishMatured(deps: MaturationDeps, message: MaturedMessage): Promise<void> {
  await deps.afterCommit?.(message);
  const kind = message.type === "session.matured" ? "session" : "trace";
  await deps.js.publish(subjects.matured(deps.topology, kind), JSON.stringify(message), {
    msgID: `${kind}:${message.entityPk}:${message.maturationCount}`,
    timeout: 10_000,
  });
  if (kind === "session") {
    await deps.sql`update sessions set published_count = greatest(published_count, ${message.maturationCount}) where id = ${message.entityPk}`;
  } else {
    await deps.sql`update traces set published_count = 1 where id = ${message.entityPk}`;
  }
}

export interface SessionRow {
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
}
export interface TraceRow {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  trace_id: string;
  session_id: string;
  status: "active" | "matured";
  maturation_count: number;
  matured_at: Date | null;
  published_count?: number;
  service_name: string;
  idle?: boolean;
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
