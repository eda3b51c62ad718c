import { Elysia, t } from "elysia";
import type postgres from "postgres";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { platformAuth } from "../auth/plugin.ts";
import { resolveService, type SignInTokens } from "../auth/principal.ts";
import type { PlatformLimiter } from "../http/limits.ts";
import { doc } from "../http/schemas.ts";
import { Overview, readOverview, WINDOWS, type OverviewWindow } from "./service.ts";

const WINDOW_NAMES = Object.keys(WINDOWS) as OverviewWindow[];

const OverviewQuery = t.Object({
  window: t.Optional(
    t.Union(
      WINDOW_NAMES.map((w) => t.Literal(w)),
      { default: "24h", error: `invalid window: must be one of ${WINDOW_NAMES.join(", ")}` },
    ),
  ),
  environment: t.Optional(
    t.String({ maxLength: 128, error: "invalid environment: must be a string of at most 128 characters" }),
  ),
});

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
