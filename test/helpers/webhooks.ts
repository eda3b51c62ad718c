import { Elysia } from "elysia";
import { KeyResolver } from "../../shared/auth/keys";
import { httpBasics } from "../../shared/http";
import { createLogger } from "../../shared/logger";
import { webhookRoutes, type WebhookOptions } from "../../apps/platform/src/webhooks/routes";
import type { TestStack } from "./stack";

/**
 * The webhook routes mounted exactly as app.ts mounts them (httpBasics + /api/v1), on their
 * own: webhook tests do not depend on every other platform route compiling.
 */
export function webhookApi(stack: TestStack, options: WebhookOptions = {}) {
  const keys = new KeyResolver(stack.database.db, { ttlMs: 200 });
  const api = new Elysia({ prefix: "/api/v1" }).use(
    webhookRoutes({ sql: stack.database.sql, keys, webhooks: { secretBox: stack.secretBox, js: stack.nats.js, topology: stack.nats.topology, ...options } }),
  );
  const app = new Elysia().use(httpBasics(createLogger("silent"))).use(api);
  return (path: string, token: string | undefined, method = "GET", body?: unknown, headers: Record<string, string> = {}) => {
    const h = new Headers(headers);
    if (token) h.set("authorization", `Token ${token}`);
    if (body !== undefined) h.set("content-type", "application/json");
    return app.handle(new Request(`http://platform.test/api/v1${path}`, { method, headers: h, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) }));
  };
}
