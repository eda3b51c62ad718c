import type postgres from "postgres";
import { badRequest } from "@cellar/shared/errors";
import { compileValidator } from "@cellar/shared/validation";
import { definitionProblem, MonitorDefinition } from "@cellar/shared/monitors/definition";
import { loadSessionFacts, loadTraceFacts } from "@cellar/shared/monitors/facts";
import { TRACE_MATURED_AT_SQL } from "@cellar/shared/maturation/state";
import { aggregateOf, aggregateValues, matchesFilters, sampleOf } from "@cellar/shared/monitors/samples";
import { decideTransition } from "@cellar/shared/monitors/state-machine";
import { resolveService, type Principal } from "../auth/principal.ts";
import { getMonitor } from "../query/monitors.ts";

type Sql = postgres.Sql;
const validator = compileValidator(MonitorDefinition);

/** The body as a full definition (400 naming the field), defaults applied. */
export function parseDefinition(body: unknown): MonitorDefinition {
  const problem = validator.firstError(body) ?? definitionProblem(body as MonitorDefinition);
  if (problem) throw badRequest(problem);
  return body as MonitorDefinition;
}

const columns = (d: MonitorDefinition) => ({
  name: d.name,
  entity: d.entity ?? "session",
  metric: d.metric,
  metric_arg: d.metric_arg ?? null,
  filters: d.filters ?? {},
  window_seconds: d.window_seconds,
  direction: d.direction ?? "above",
  threshold: d.threshold,
  warning_threshold: d.warning_threshold ?? null,
  hysteresis: d.hysteresis ?? 0,
  min_samples: d.min_samples ?? 1,
  enabled: d.enabled ?? true,
});

/** At most this many monitors per service: each one is evaluated on every maturation of it. */
export const MAX_MONITORS_PER_SERVICE = 100;

export async function createMonitor(sql: Sql, p: Principal, d: MonitorDefinition) {
  const svc = await resolveService(sql, p, d.service_name);
  const [{ n }] = await sql<
    { n: number }[]
  >`select count(*)::int as n from monitors where trace_service_id = ${svc.id}`;
  if (n >= MAX_MONITORS_PER_SERVICE)
    throw badRequest(`invalid service_name: the service already has ${MAX_MONITORS_PER_SERVICE} monitors`);
  const c = columns(d);
  const [row] = await sql`
    insert into monitors ${sql({ ...c, filters: sql.json(c.filters), tenant_id: p.tenantId, trace_service_id: svc.id } as any)}
    returning id`;
  return getMonitor(sql, p, row.id);
}

/** A PUT: the stored definition with the given fields over it, validated whole. */
export async function updateMonitor(sql: Sql, p: Principal, id: string, body: unknown) {
  const current = await getMonitor(sql, p, id);
  if (!body || typeof body !== "object" || Array.isArray(body)) throw badRequest("body must be a JSON object");
  const merged: Record<string, unknown> = {
    service_name: current.service_name,
    name: current.name,
    entity: current.entity,
    metric: current.metric,
    ...(current.metric_arg !== null ? { metric_arg: current.metric_arg } : {}),
    filters: current.filters,
    window_seconds: current.window_seconds,
    direction: current.direction,
    threshold: current.threshold,
    warning_threshold: current.warning_threshold,
    hysteresis: current.hysteresis,
    min_samples: current.min_samples,
    enabled: current.enabled,
    ...body,
  };
  if (merged.service_name !== current.service_name) throw badRequest("invalid service_name: a monitor cannot move");
  if ((body as Record<string, unknown>).metric !== undefined && !("metric_arg" in body)) delete merged.metric_arg;
  const d = parseDefinition(merged);
  const c = columns(d);
  await sql`update monitors set ${sql({ ...c, filters: sql.json(c.filters), updated_at: new Date() } as any)} where id = ${id}`;
  return getMonitor(sql, p, id);
}

export async function deleteMonitor(sql: Sql, p: Principal, id: string) {
  await getMonitor(sql, p, id);
  await sql`delete from monitors where id = ${id} and tenant_id = ${p.tenantId}`;
}

/** The most matured entities a preview reads (newest first): bounded work per request. */
export const PREVIEW_LIMIT = 5_000;

/**
 * What the definition's aggregate is over the last window, from the matured entities of the
 * service (the same sample and aggregate functions as the evaluation), and the state it would
 * take from `ok`. Reads at most PREVIEW_LIMIT entities.
 */
export async function previewMonitor(sql: Sql, p: Principal, d: MonitorDefinition) {
  const svc = await resolveService(sql, p, d.service_name);
  const c = columns(d);
  const since = new Date(Date.now() - c.window_seconds * 1000);
  const facts =
    c.entity === "session"
      ? await loadSessionFacts(
          sql,
          sql`s.trace_service_id = ${svc.id} and s.status = 'matured' and s.matured_at > ${since}`,
          PREVIEW_LIMIT,
        )
      : await loadTraceFacts(
          sql,
          sql`tr.trace_service_id = ${svc.id} and ${sql.unsafe(TRACE_MATURED_AT_SQL)} > ${since}`,
          PREVIEW_LIMIT,
        );
  const values = facts
    .filter((f) => matchesFilters(c.filters, f))
    .map((f) => sampleOf({ metric: c.metric, metricArg: c.metric_arg, filters: c.filters }, f))
    .filter((v): v is number => v !== null && Number.isFinite(v));
  const value = aggregateValues(aggregateOf(c.metric), values);
  const transition = decideTransition(
    "ok",
    { value, samples: values.length },
    {
      direction: c.direction,
      threshold: c.threshold,
      warningThreshold: c.warning_threshold,
      hysteresis: c.hysteresis,
      minSamples: c.min_samples,
    },
  );
  return {
    value,
    samples: values.length,
    window_seconds: c.window_seconds,
    truncated: facts.length >= PREVIEW_LIMIT,
    state: transition === "alert" ? "alert" : transition === "warn" ? "warning" : "ok",
  };
}
