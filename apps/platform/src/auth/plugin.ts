import { Elysia } from "elysia";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { authenticatePlatform, type SignInTokens } from "./principal";

/** Adds `principal` to every route of the module that uses it; failures are the bare 401. */
export function platformAuth(keys: KeyResolver, signIns?: SignInTokens) {
  return new Elysia({ name: "platform-auth" }).derive({ as: "scoped" }, async ({ request }) => ({
    principal: await authenticatePlatform(keys, request.headers.get("authorization"), signIns),
  }));
}
