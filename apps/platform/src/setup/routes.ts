import { Elysia, t } from "elysia";
import type { Db } from "@cellar/shared/db/client";
import { PASSWORD_MAX_LENGTH } from "@cellar/shared/auth/passwords";
import { cappedBody } from "../signin/routes.ts";
import type { SignInService } from "../signin/service.ts";
import { completeSetup, deploymentIsSetUp } from "./service.ts";

const SetupBody = t.Object(
  {
    token: t.String({ minLength: 1, maxLength: 128, error: "invalid token: must be a string" }),
    organization: t.String({
      minLength: 1,
      maxLength: 200,
      pattern: "\\S",
      error: "invalid organization: must be 1 to 200 characters",
    }),
    email: t.String({ minLength: 3, maxLength: 320, error: "invalid email: must be an email address" }),
    password: t.String({
      maxLength: PASSWORD_MAX_LENGTH,
      error: `invalid password: must be a string of at most ${PASSWORD_MAX_LENGTH} characters`,
    }),
  },
  { additionalProperties: false, error: 'invalid body: must be {"token", "organization", "email", "password"}' },
);

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
