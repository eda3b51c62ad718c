import { Elysia, t } from "elysia";
import { unauthorized } from "@cellar/shared/errors";
import { PASSWORD_MAX_LENGTH } from "@cellar/shared/auth/passwords";
import type { Principal } from "../auth/principal";
import type { SignInService } from "./service";

/** Signed-in requests only: a platform key cannot sign out, list or mint keys (docs/dashboard.md). */
function signedIn(signIns: SignInService) {
  return new Elysia({ name: "dashboard-signed-in" }).derive({ as: "scoped" }, async ({ request }): Promise<{ principal: Principal }> => {
    const m = /^Bearer ([^\s]+)$/i.exec(request.headers.get("authorization") ?? "");
    const principal = m ? await signIns.resolve(m[1]) : null;
    if (!principal) throw unauthorized();
    return { principal };
  });
}

const Credentials = t.Object(
  {
    email: t.String({ minLength: 1, maxLength: 320, error: "invalid email: must be a string of 1 to 320 characters" }),
    password: t.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH, error: `invalid password: must be a string of 1 to ${PASSWORD_MAX_LENGTH} characters` }),
  },
  { additionalProperties: false, error: 'invalid body: must be {"email", "password"}' },
);
const Acceptance = t.Object(
  {
    token: t.String({ minLength: 1, maxLength: 128, error: "invalid token: must be a string" }),
    password: t.String({ maxLength: PASSWORD_MAX_LENGTH, error: `invalid password: must be a string of at most ${PASSWORD_MAX_LENGTH} characters` }),
  },
  { additionalProperties: false, error: 'invalid body: must be {"token", "password"}' },
);

/**
 * /auth: the dashboard's own endpoints, outside /api/v1 so the API's contract is untouched.
 * Sign-in and invitation acceptance answer `{token, expiresAt}`; the token goes in
 * `Authorization: Bearer` on /api/v1 and on the signed-in routes below.
 */
export function signInRoutes(signIns: SignInService) {
  return new Elysia({ prefix: "/auth" })
    .post("/sign-in", ({ body }) => signIns.signIn(body.email.trim(), body.password), { body: Credentials })
    .post("/invitations/accept", ({ body }) => signIns.acceptInvitation(body.token, body.password), { body: Acceptance })
    .use(signedIn(signIns))
    .post("/sign-out", async ({ principal, set }) => {
      await signIns.signOut(principal);
      set.status = 204;
    })
    .get("/me", ({ principal }) => signIns.me(principal))
    .get("/platform-keys", ({ principal }) => signIns.listPlatformKeys(principal))
    .post("/platform-keys", async ({ principal, set }) => {
      set.status = 201;
      return signIns.createPlatformKey(principal);
    })
    .delete("/platform-keys/:id", async ({ principal, params, set }) => {
      await signIns.revokePlatformKey(principal, params.id);
      set.status = 204;
    });
}
