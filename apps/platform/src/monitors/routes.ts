import { Elysia, t } from "elysia";
import { forbidden } from "@cellar/shared/errors";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { hasRole, type Principal } from "../auth/principal.ts";
import { doc, LOOKUP_ERRORS } from "../http/schemas.ts";
import { MonitorDefinition } from "@cellar/shared/monitors/definition";
import { Any } from "./model.ts";
import { listMonitors, monitorHistory } from "../query/monitors.ts";
import * as svc from "./service.ts";

const TAG = "Monitors";
const member = (p: Principal) => {
  if (!hasRole(p, "member")) throw forbidden("changing monitors needs role member or higher");
};

/**
 * /monitors (docs/monitors.md): definitions, state and history; any role reads the monitors of
 * services it can see, member and above create, change and delete them.
 */
export function monitorRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/monitors" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get("", ({ principal, query }) => listMonitors(deps.sql, principal, query.serviceName), {
      query: t.Object({ serviceName: t.Optional(t.String({ minLength: 1, maxLength: 200 })) }),
      detail: doc(TAG, "Monitors of the tenant (of one service with ?serviceName=), with their state", Any),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        member(principal);
        const created = await svc.createMonitor(deps.sql, principal, svc.parseDefinition(body));
        set.status = 201;
        return created;
      },
      {
        detail: doc(TAG, "Create a monitor", Any, {
          status: 201,
          errors: [400, 401, 403, 404],
          request: MonitorDefinition,
        }),
      },
    )
    .post("/preview", ({ principal, body }) => svc.previewMonitor(deps.sql, principal, svc.parseDefinition(body)), {
      detail: doc(TAG, "The definition's aggregate over the last window, without saving it", Any, {
        request: MonitorDefinition,
      }),
    })
    .get("/:id", ({ principal, params }) => monitorHistory(deps.sql, principal, params.id), {
      detail: doc(TAG, "A monitor, its chart (last 24 h, a point a minute) and its state changes", Any, {
        errors: LOOKUP_ERRORS,
      }),
    })
    .put(
      "/:id",
      ({ principal, params, body }) => {
        member(principal);
        return svc.updateMonitor(deps.sql, principal, params.id, body);
      },
      { detail: doc(TAG, "Change a monitor (fields given replace the stored ones)", Any) },
    )
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        member(principal);
        await svc.deleteMonitor(deps.sql, principal, params.id);
        set.status = 204;
        return null;
      },
      { detail: doc(TAG, "Delete a monitor and its history", t.Null(), { status: 204 }) },
    );
}
