import { Elysia } from "elysia";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { httpBasics } from "@cellar/shared/http";
import { createLogger } from "@cellar/shared/logger";
import { webhookRoutes, type WebhookOptions } from "../../apps/platform/src/webhooks/routes";
import type { Dispatcher, DispatcherDeps } from "../../apps/dispatcher/src/dispatcher";
import type { TestStack } from "./stack";

/**
 * The webhook routes mounted exactly as app.ts mounts them (httpBasics + /api/v1), on their
 * own: webhook tests do not depend on every other platform route compiling.
 */
export function webhookApi(stack: TestStack, options: WebhookOptions = {}) {
  const keys = new KeyResolver(stack.database.db, { ttlMs: 200 });
  const api = new Elysia({ prefix: "/api/v1" }).use(
    webhookRoutes({
      sql: stack.database.sql,
      keys,
      webhooks: { secretBox: stack.secretBox, js: stack.nats.js, topology: stack.nats.topology, ...options },
    }),
  );
  const app = new Elysia().use(httpBasics(createLogger("silent"))).use(api);
  return (
    path: string,
    token: string | undefined,
    method = "GET",
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const h = new Headers(headers);
    if (token) h.set("authorization", `Token ${token}`);
    if (body !== undefined) h.set("content-type", "application/json");
    return app.handle(
      new Request(`http://platform.test/api/v1${path}`, {
        method,
        headers: h,
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      }),
    );
  };
}

export interface ReceivedHook {
  path: string;
  headers: Record<string, string>;
  /** The raw body bytes as text: verify signatures on this, never on a re-serialized object. */
  body: string;
  at: number;
}

/**
 * An msw webhook receiver for every https POST. `behave[path]` answers the nth hit on a path
 * (1-based); unset paths answer 204. Call `close()` in afterAll.
 */
export async function createReceiver() {
  const { setupServer } = await import("msw/node");
  const { http } = await import("msw");
  const hits: ReceivedHook[] = [];
  const behave: Record<string, (n: number, hook: ReceivedHook) => Response | Promise<Response>> = {};
  const active: Record<string, number> = {};
  const maxActive: Record<string, number> = {};
  const server = setupServer(
    http.post(/^https?:\/\//, async ({ request }) => {
      const url = new URL(request.url);
      const hook: ReceivedHook = {
        path: url.pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        at: Date.now(),
      };
      hits.push(hook);
      const p = url.pathname;
      active[p] = (active[p] ?? 0) + 1;
      maxActive[p] = Math.max(maxActive[p] ?? 0, active[p]);
      try {
        const n = hits.filter((h) => h.path === url.pathname).length;
        return await (behave[url.pathname]?.(n, hook) ?? new Response(null, { status: 204 }));
      } finally {
        active[p]--;
      }
    }),
  );
  server.listen({ onUnhandledRequest: "bypass" });
  return {
    hits: (path: string) => hits.filter((h) => h.path === path),
    behave,
    /** Highest number of requests in flight at once on `path`. */
    maxConcurrent: (path: string) => maxActive[path] ?? 0,
    close: () => server.close(),
  };
}

/**
 * One dispatcher at a time on a test file's stack: `start(overrides)` stops the running one and
 * starts another with the file's `defaults` plus `overrides`; `current` is the running one.
 */
export function dispatcherSlot(stack: () => TestStack, defaults: Partial<DispatcherDeps> = {}) {
  let current: Dispatcher | undefined;
  return {
    get current() {
      return current;
    },
    async start(overrides: Partial<DispatcherDeps> = {}): Promise<Dispatcher> {
      await current?.stop();
      current = await stack().startDispatcher({ ...defaults, ...overrides });
      return current;
    },
    async stop() {
      await current?.stop();
      current = undefined;
    },
  };
}
