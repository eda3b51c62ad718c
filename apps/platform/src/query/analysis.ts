import type postgres from "postgres";
import { badRequest } from "@cellar/shared/errors";
import type { PlatformDeps } from "../deps.ts";
import { resolveService, type Principal } from "../auth/principal.ts";
import { pagedQuery } from "../http/filters.ts";
import { readPool, replicaOrPrimary } from "../replica.ts";
import type { PagedQuery } from "./filters.ts";
import { findingStats, filterFindings, filterIssues, issueBreakdown, issueStats, type Range } from "./issues.ts";

export { FindingsFilteredBody, IssuesFilteredBody } from "./issues.ts";

/**
 * The reads of issues and findings as the routes call them: the service resolved for the
 * principal on the primary, then the read on the replica as it is (lists and counts are not
 * read-your-writes), an issue's breakdown asked again of the primary on a 404 (replica.ts). The
 * statements are in ./issues.ts.
 */

type Svc = Awaited<ReturnType<typeof serviceOf>>;

/** The principal's service of that name, with its tenant. */
async function serviceOf(deps: PlatformDeps, p: Principal, name: string) {
  return { ...(await resolveService(deps.sql, p, name)), tenantId: p.tenantId };
}

/** A stats range: both ends optional, `to` after `from`. */
function range(from?: string, to?: string): Range {
  const r = { from: from ? new Date(from) : null, to: to ? new Date(to) : null };
  if (r.from && r.to && r.from >= r.to) throw badRequest("invalid to: must be after from");
  return r;
}

/** A search of one service's issues or findings (POST .../filtered). */
const searchWith =
  <R>(filter: (sql: postgres.Sql, svc: Svc, q: PagedQuery) => Promise<R>) =>
  async (deps: PlatformDeps, p: Principal, body: { service_name: string } & Record<string, unknown>) =>
    filter(readPool(deps), await serviceOf(deps, p, body.service_name), pagedQuery(body, "skip_total_count"));

/** Counts over one service's findings in a range (.../stats): the service resolved before the range is checked. */
const statsWith =
  <R>(stats: (sql: postgres.Sql, svc: Svc, r: Range) => Promise<R>) =>
  async (deps: PlatformDeps, p: Principal, serviceName: string, from?: string, to?: string) =>
    stats(readPool(deps), await serviceOf(deps, p, serviceName), range(from, to));

export const searchIssues = searchWith(filterIssues);
export const searchFindings = searchWith(filterFindings);
export const issueStatsRead = statsWith(issueStats);
export const findingStatsRead = statsWith(findingStats);

/** GET issues/{issueId}/breakdown. */
export function issueBreakdownRead(deps: PlatformDeps, p: Principal, serviceName: string, issueId: string) {
  return replicaOrPrimary(deps, async (sql) => issueBreakdown(sql, await serviceOf(deps, p, serviceName), issueId));
}
