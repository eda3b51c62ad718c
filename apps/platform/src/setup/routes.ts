import { Elysia } from "elysia";
import type { Db } from "@cellar/shared/db/client";
import { cappedBody } from "../signin/routes.ts";
import type { SignInService } from "../signin/service.ts";
import { SetupBody } from "./model.ts";
import { completeSetup, deploymentIsSetUp } from "./service.ts";

/**
 * /auth/setup: first run, beside the other unauthenticated dashboard endpoints (outside /api/v1).
 * `GET` says whether the deployment still needs it; `POST` creates the first organization and its
 * owner with the setup token from the platform's log, and answers like sign-in `{token, expiresAt}`.
 */
export function setupRoutes(deps: { db: Db; signIns: SignInService }) {
  return new Elysia({ prefix: "/auth/setup" })
    .get("", async () => ({ needed: !(await deploymentIsSetUp(deps.db)) }))
    .post("", async ({ request, set }) => {
      const body = await cappedBody(request, SetupBody);
      const signedIn = await completeSetup(deps.db, deps.signIns, body);
      set.status = 201;
      return signedIn;
    });
}
