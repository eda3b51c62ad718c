import { Elysia } from "elysia";
import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { badRequest, unauthorized } from "@cellar/shared/errors";
import { readCappedJson } from "../http/body.ts";
import type { Principal } from "../auth/principal.ts";
import { Acceptance, Credentials } from "./model.ts";
import type { SignInService } from "./service.ts";

/** Signed-in requests only: a platform key cannot sign out, list or mint keys (docs/dashboard.md). */
function signedIn(signIns: SignInService) {
  return new Elysia({ name: "dashboard-signed-in" }).derive(
    { as: "scoped" },
    async ({ request, server }): Promise<{ principal: Principal }> => {
      const m = /^Bearer ([^\s]+)$/i.exec(request.headers.get("authorization") ?? "");
      const principal = m ? await signIns.resolve(m[1], server?.requestIP(request)?.address) : null;
      if (!principal) throw unauthorized();
      return { principal };
    },
  );
}

/** Sign-in bodies are two short strings; they are read before anyone is authenticated. */
export const SIGN_IN_MAX_BODY_BYTES = 4096;

/**
 * The body read by hand, at most SIGN_IN_MAX_BODY_BYTES (413 beyond), then checked against
 * `schema` (400 with the schema's message). Declaring `body` on the route instead would let
 * Elysia buffer any size before validation.
 */
export async function cappedBody<T extends TSchema>(request: Request, schema: T): Promise<Static<T>> {
  const value = await readCappedJson(request, SIGN_IN_MAX_BODY_BYTES);
  if (Value.Check(schema, value)) return value;
  const first = Value.Errors(schema, value).First();
  const custom = (first?.schema as { error?: unknown } | undefined)?.error;
  throw badRequest(
    typeof custom === "string"
      ? custom
      : `invalid ${first?.path.replace(/^\//, "") || "body"}: ${first?.message ?? "does not match the schema"}`,
  );
}

/**
 * /auth: the dashboard's own endpoints, outside /api/v1 so the API's contract is untouched.
 * Sign-in and invitation acceptance answer `{token, expiresAt}`; the token goes in
 * `Authorization: Bearer` on /api/v1 and on the signed-in routes below.
 */
export function signInRoutes(signIns: SignInService) {
  return new Elysia({ prefix: "/auth" })
    .post("/sign-in", async ({ request, server }) => {
      const body = await cappedBody(request, Credentials);
      return signIns.signIn(body.email.trim(), body.password, server?.requestIP(request)?.address);
    })
    .post("/invitations/accept", async ({ request }) => {
      const body = await cappedBody(request, Acceptance);
      return signIns.acceptInvitation(body.token, body.password);
    })
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
