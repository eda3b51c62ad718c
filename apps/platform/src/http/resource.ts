import { Elysia } from "elysia";
import { platformAuth } from "../auth/plugin.ts";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import type { SignInTokens } from "../auth/principal.ts";
import type { PlatformLimiter } from "./limits.ts";

/** What authenticating a resource's requests takes (a part of PlatformDeps). */
export interface ResourceDeps {
  keys: KeyResolver;
  signIns?: SignInTokens;
  limiter?: PlatformLimiter;
}

/**
 * A resource's routes under `prefix`: authenticated (`principal` in every handler) and counted
 * against the per-key read limit. A resource whose routes are many adds them in groups by
 * subject, each a function of this instance (`.use((app) => groupRoutes(app, deps))`): they
 * land on the same instance in the order written, under the same hooks.
 */
export function resource(deps: ResourceDeps, prefix: string) {
  return new Elysia({ prefix }).use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns));
}

/** The instance a group of a resource's routes is added to. */
export type Resource = ReturnType<typeof resource>;

/** Answers `value` as 201 Created (a route that creates something). */
export function created<T>(set: { status?: number | string }, value: T): T {
  set.status = 201;
  return value;
}
