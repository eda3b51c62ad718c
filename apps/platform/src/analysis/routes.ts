import { Elysia, t } from "elysia";
import { badRequest } from "@cellar/shared/errors";
import type { PlatformDeps } from "../deps.ts";
import { readPool, replicaOrPrimary } from "../replica.ts";
import { platformAuth } from "../auth/plugin.ts";
import { resolveService, type Principal } from "../auth/principal.ts";
import { pagedQuery, strictBody } from "../http/filters.ts";
import { doc, optionalIsoQuery, requiredQuery } from "../http/schemas.ts";
import { FindingsPage, FindingStats, IssueBreakdown, IssuesPage, IssueStats, StatsBody } from "./model.ts";
import {
  FindingsFilteredBody,
  findingStats,
  filterFindings,
  filterIssues,
  issueBreakdown,
  IssuesFilteredBody,
  issueStats,
  type Range,
} from "../query/issues.ts";

const TAG = "Analysis";

function range(from?: string, to?: string): Range {
  const r = { from: from ? new Date(from) : null, to: to ? new Date(to) : null };
  if (r.from && r.to && r.from >= r.to) throw badRequest("invalid to: must be after from");
  return r;
}

/** Issues (a problem across sessions) and findings (one occurrence in one session). */
export function analysisRoutes(deps: PlatformDeps) {
  const service = async (p: Principal, name: string) => ({
    ...(await resolveService(deps.sql, p, name)),
    tenantId: p.tenantId,
  });
  return new Elysia({ prefix: "/telemetry/otel" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .post(
      "/issues/filtered",
      async ({ body, principal }) =>
        filterIssues(readPool(deps), await service(principal, body.service_name), pagedQuery(body, "skip_total_count")),
      {
        body: IssuesFilteredBody,
        transform: strictBody(IssuesFilteredBody),
        detail: doc(TAG, "Search issues of a service", IssuesPage),
      },
    )
    .post(
      "/issues/:serviceName/stats",
      async ({ params, body, principal }) =>
        issueStats(readPool(deps), await service(principal, params.serviceName), range(body?.from, body?.to)),
      {
        params: t.Object({ serviceName: t.String() }),
        transform: strictBody(StatsBody),
        body: t.Optional(StatsBody),
        detail: doc(TAG, "Issue statistics over a time range (all time by default)", IssueStats),
      },
    )
    .get(
      "/issues/:serviceName/breakdown",
      async ({ params, query, principal }) =>
        replicaOrPrimary(deps, async (sql) =>
          issueBreakdown(sql, await service(principal, query.service_name), params.serviceName),
        ),
      {
        params: t.Object({ serviceName: t.String({ description: "The issue id" }) }),
        query: t.Object({ service_name: requiredQuery("service_name") }),
        detail: doc(TAG, "One issue's breakdown", IssueBreakdown, { rename: { serviceName: "issueId" } }),
      },
    )
    .post(
      "/findings/filtered",
      async ({ body, principal }) =>
        filterFindings(
          readPool(deps),
          await service(principal, body.service_name),
          pagedQuery(body, "skip_total_count"),
        ),
      {
        body: FindingsFilteredBody,
        transform: strictBody(FindingsFilteredBody),
        detail: doc(TAG, "Search findings of a service", FindingsPage),
      },
    )
    .get(
      "/findings/:serviceName/stats",
      async ({ params, query, principal }) =>
        findingStats(readPool(deps), await service(principal, params.serviceName), range(query.from, query.to)),
      {
        params: t.Object({ serviceName: t.String() }),
        query: t.Object({ from: optionalIsoQuery("from"), to: optionalIsoQuery("to") }),
        detail: doc(TAG, "Finding statistics over a time range (all time by default)", FindingStats),
      },
    );
}
