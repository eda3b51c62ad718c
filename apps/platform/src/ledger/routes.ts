import { Elysia } from "elysia";
import type postgres from "postgres";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { platformAuth } from "../auth/plugin.ts";
import { resolveService, type SignInTokens } from "../auth/principal.ts";
import type { PlatformLimiter } from "../http/limits.ts";
import { doc } from "../http/schemas.ts";
import { Ledger, LedgerQuery } from "./model.ts";
import { readLedger } from "./service.ts";

const TAG = "Ledger";
const DESCRIPTION =
  "Beyond the contract (docs/ledger.md): per minute for 1h, per hour for 24h and 7d. What the SDKs were asked to send and dropped (their reports), what ingest accepted per door and refused per reason, what was stored, dead-lettered and replayed, and what is still in flight; with the tenant's latest reconciliation (accepted = stored + dead-lettered - replayed + in flight). Any role may read it.";

/** GET /ledger and /ledger/:serviceName: the books of every visible service, or of one. */
export function ledgerRoutes(deps: {
  sql: postgres.Sql;
  keys: KeyResolver;
  signIns?: SignInTokens;
  limiter?: PlatformLimiter;
  now?: () => Date;
}) {
  const now = () => deps.now?.() ?? new Date();
  return new Elysia({ prefix: "/ledger" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get(
      "",
      ({ principal, query }) =>
        readLedger(deps.sql, principal, { service: null, window: query.window ?? "24h", now: now() }),
      {
        query: LedgerQuery,
        detail: doc(TAG, "The ledger of every service you can see", Ledger, {
          errors: [400, 401],
          description: DESCRIPTION,
        }),
      },
    )
    .get(
      "/:serviceName",
      async ({ principal, params, query }) => {
        const svc = await resolveService(deps.sql, principal, params.serviceName);
        return readLedger(deps.sql, principal, { service: svc.name, window: query.window ?? "24h", now: now() });
      },
      {
        query: LedgerQuery,
        detail: doc(TAG, "The ledger of one service", Ledger, { description: DESCRIPTION }),
      },
    );
}
