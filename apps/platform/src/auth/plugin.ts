import { Elysia } from "elysia";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import type { RateLimiter } from "@cellar/shared/rate-limit";
import { readCappedJson } from "../http/body.ts";
import { authenticatePlatform, type Principal, type SignInTokens } from "./principal.ts";

interface Authenticated {
  principal: Principal;
  rateHeaders: Record<string, string>;
}

type Server = { requestIP(r: Request): { address: string } | null } | null;

/**
 * Adds `principal` to every route of the module that uses it; failures are the bare 401.
 *
 * Authentication runs before the body is read: Elysia parses a body before `derive`, so the
 * parse hook itself authenticates first and then reads at most PLATFORM_MAX_BODY_BYTES. An
 * unauthenticated request never has its body read, whatever its size or syntax, and gets the
 * same bare 401 as every other failure. One lookup per request (memoized for derive).
 * `limiter` is the per-key request limit (429 with Retry-After past it).
 */
export function platformAuth(keys: KeyResolver, limiter?: RateLimiter, signIns?: SignInTokens) {
  const done = new WeakMap<Request, Promise<Authenticated>>();
  // Elysia turns anything thrown in a parse hook into its own 400, so the parse hook records
  // what went wrong and `derive` throws it: the 401 first, then a body error (413, bad JSON).
  const bodyErrors = new WeakMap<Request, unknown>();
  const authenticate = (request: Request, server: Server): Promise<Authenticated> => {
    let pending = done.get(request);
    if (!pending) {
      const client = server?.requestIP(request)?.address;
      pending = authenticatePlatform(keys, request.headers.get("authorization"), client, signIns).then((principal) => ({
        principal,
        rateHeaders: limiter ? limiter.take(principal.keyId) : {},
      }));
      done.set(request, pending);
    }
    return pending;
  };
  return new Elysia({ name: "platform-auth" })
    .onParse({ as: "scoped" }, async ({ request, server }) => {
      try {
        await authenticate(request, server as Server);
        return (await readCappedJson(request)) ?? null;
      } catch (err) {
        bodyErrors.set(request, err);
        return null;
      }
    })
    .derive({ as: "scoped" }, async ({ request, server, set }) => {
      const { principal, rateHeaders } = await authenticate(request, server as Server);
      if (bodyErrors.has(request)) throw bodyErrors.get(request);
      Object.assign(set.headers, rateHeaders);
      return { principal };
    });
}
