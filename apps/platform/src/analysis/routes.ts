import { Elysia, t } from "elysia";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { strictBody } from "../http/filters.ts";
import { doc, optionalIsoQuery, requiredQuery } from "../http/schemas.ts";
import { FindingsPage, FindingStats, IssueBreakdown, IssuesPage, IssueStats, StatsBody } from "./model.ts";
import {
  FindingsFilteredBody,
  findingStatsRead,
  issueBreakdownRead,
  IssuesFilteredBody,
  issueStatsRead,
  searchFindings,
  searchIssues,
} from "../query/analysis.ts";

const TAG = "Analysis";

/** Issues (a problem across sessions) and findings (one occurrence in one session). */
export function analysisRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/telemetry/otel" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .post("/issues/filtered", ({ body, principal }) => searchIssues(deps, principal, body), {
      body: IssuesFilteredBody,
      transform: strictBody(IssuesFilteredBody),
      detail: doc(TAG, "Search issues of a service", IssuesPage),
    })
    .post(
      "/issues/:serviceName/stats",
      ({ params, body, principal }) => issueStatsRead(deps, principal, params.serviceName, body?.from, body?.to),
      {
        params: t.Object({ serviceName: t.String() }),
        transform: strictBody(StatsBody),
        body: t.Optional(StatsBody),
        detail: doc(TAG, "Issue statistics over a time range (all time by default)", IssueStats),
      },
    )
    .get(
      "/issues/:serviceName/breakdown",
      ({ params, query, principal }) => issueBreakdownRead(deps, principal, query.service_name, params.serviceName),
      {
        params: t.Object({ serviceName: t.String({ description: "The issue id" }) }),
        query: t.Object({ service_name: requiredQuery("service_name") }),
        detail: doc(TAG, "One issue's breakdown", IssueBreakdown, { rename: { serviceName: "issueId" } }),
      },
    )
    .post("/findings/filtered", ({ body, principal }) => searchFindings(deps, principal, body), {
      body: FindingsFilteredBody,
      transform: strictBody(FindingsFilteredBody),
      detail: doc(TAG, "Search findings of a service", FindingsPage),
    })
    .get(
      "/findings/:serviceName/stats",
      ({ params, query, principal }) => findingStatsRead(deps, principal, params.serviceName, query.from, query.to),
      {
        params: t.Object({ serviceName: t.String() }),
        query: t.Object({ from: optionalIsoQuery("from"), to: optionalIsoQuery("to") }),
        detail: doc(TAG, "Finding statistics over a time range (all time by default)", FindingStats),
      },
    );
}
