import type { Static } from "elysia";
import type { PlatformDeps } from "../deps.ts";
import { candidateServices, pickOne, type Principal, resolveService } from "../auth/principal.ts";
import { pagedQuery } from "../http/filters.ts";
import { readPool, replicaOrPrimary } from "../replica.ts";
import { inSnapshot } from "./snapshot.ts";
import { findSpans, findTraceMetrics, readTrace, traceEvents, traceSpans } from "./traces/read.ts";
import { filterTraces, type TracesFilteredBody } from "./traces/search.ts";

export { TracesFilteredBody } from "./traces/search.ts";

/**
 * The reads of traces, spans and trace metrics as the routes call them: the service (or the
 * services a bare id may be in) resolved for the principal on the primary, then the read on the
 * replica, asked again of the primary on a 404 (replica.ts). A read of several statements runs
 * in one snapshot. The statements themselves are in query/traces/ (read.ts, spans.ts, search.ts).
 */

export async function traceOf(deps: PlatformDeps, p: Principal, traceId: string, serviceName: string) {
  const svc = await resolveService(deps.sql, p, serviceName);
  return replicaOrPrimary(deps, (sql) => inSnapshot(sql, (tx) => readTrace(tx, svc, traceId, p.tenantId)));
}

export async function spansOfTrace(deps: PlatformDeps, p: Principal, serviceName: string, traceId: string) {
  const svc = await resolveService(deps.sql, p, serviceName);
  return replicaOrPrimary(deps, (sql) => inSnapshot(sql, (tx) => traceSpans(tx, svc, traceId)));
}

export async function spanById(deps: PlatformDeps, p: Principal, spanId: string, serviceName?: string) {
  const services = await candidateServices(deps.sql, p, serviceName);
  return replicaOrPrimary(deps, (sql) =>
    inSnapshot(sql, async (tx) => pickOne(await findSpans(tx, services, spanId), "span", "spanId")),
  );
}

export async function eventsOfTrace(deps: PlatformDeps, p: Principal, serviceName: string, traceId: string) {
  const svc = await resolveService(deps.sql, p, serviceName);
  return replicaOrPrimary(deps, (sql) => inSnapshot(sql, (tx) => traceEvents(tx, svc, traceId)));
}

export async function traceMetricsOf(deps: PlatformDeps, p: Principal, traceId: string, serviceName?: string) {
  const services = await candidateServices(deps.sql, p, serviceName);
  return replicaOrPrimary(deps, async (sql) =>
    pickOne(await findTraceMetrics(sql, services, traceId), "trace", "traceId"),
  );
}

/** POST traces/filtered, on the replica as it is. */
export async function searchTraces(deps: PlatformDeps, p: Principal, body: Static<typeof TracesFilteredBody>) {
  const svc = await resolveService(deps.sql, p, body.serviceName);
  return filterTraces(readPool(deps), { ...svc, tenantId: p.tenantId }, pagedQuery(body, "skipTotalCount"));
}
