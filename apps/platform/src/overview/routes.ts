import { Elysia } from "elysia";
import type postgres from "postgres";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { platformAuth } from "../auth/plugin.ts";
import { resolveService, type SignInTokens } from "../auth/principal.ts";
import type { PlatformLimiter } from "../http/limits.ts";
import { doc } from "../http/schemas.ts";
import { Overview, OverviewQuery } from "./model.ts";
import { readOverview } from "../query/overview.ts";

/** GET /overview/:serviceName: the dashboard's home, from rollups (beyond the contract; docs/dashboard.md). */
export function overviewRoutes(deps: {
  sql: postgres.Sql;
  keys: KeyResolver;
  signIns?: SignInTokens;
  limiter?: PlatformLimiter;
  now?: () => Date;
}) {
  return new Elysia({ prefix: "/overview" }).use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns)).get(
    "/:serviceName",
    async ({ principal, params, query }) => {
      const svc = await resolveService(deps.sql, principal, params.serviceName);
      return readOverview(deps.sql, {
        serviceId: svc.id,
        window: query.window ?? "24h",
        environment: query.environment,
        now: deps.now?.() ?? new Date(),
      });
    },
    {
      query: OverviewQuery,
      detail: doc(
        "Overview",
        "Sessions, traces, cost, tokens, latency and problems of a service over a window",
        Overview,
        {
          description:
            "Beyond the contract: answered from rollups kept as sessions mature (not from raw rows). window: 1h (5-minute points), 24h (hourly), 7d (6-hourly), 30d (daily); environment: one environment, else all. A session counts at its first activity; latency percentiles come from fixed log-scale histograms (within 9%). See docs/dashboard.md.",
        },
      ),
    },
  );
}
