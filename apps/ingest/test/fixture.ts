import { bootstrapTenant, createApiKey } from "@cellar/shared/admin/tenancy";
import { KeyResolver } from "@cellar/shared/auth/keys";
import type { KeyKind } from "@cellar/shared/db/schema";
import { createLogger, type LogLevel } from "@cellar/shared/logger";
import { createTestStack, type TestStack } from "../../../test/helpers/stack.ts";
import { createIngestApp, type IngestDeps } from "../src/app.ts";

export type IngestFixture = Awaited<ReturnType<typeof createIngestFixture>>;

/**
 * A fresh DB + NATS namespace (no processor, so INGEST keeps every stored message countable)
 * and an ingest app built with the given overrides.
 */
export async function createIngestFixture(overrides: Partial<IngestDeps> = {}) {
  const stack: TestStack = await createTestStack({ startProcessor: false });
  const tenant = await bootstrapTenant(stack.database.db, { name: `t-${crypto.randomUUID().slice(0, 8)}` });
  const logger = createLogger((process.env.TEST_LOG_LEVEL as LogLevel) || "silent");
  const build = (more: Partial<IngestDeps> = {}) =>
    createIngestApp({
      js: stack.nats.js,
      topology: stack.nats.topology,
      keys: new KeyResolver(stack.database.db, { ttlMs: 200 }),
      logger,
      maxBodyBytes: 256 * 1024,
      publishTimeoutMs: 2_000,
      ...overrides,
      ...more,
    });
  const app = build();
  const auth = { authorization: `Bearer ${tenant.telemetryKey}` };

  return {
    stack,
    tenant,
    app,
    auth,
    build,
    /** POST JSON (objects are serialized; strings are sent as is) with the telemetry key unless overridden. */
    post(path: string, body: unknown, headers: Record<string, string | undefined> = {}, target = app) {
      const h = new Headers();
      for (const [k, v] of Object.entries({ "content-type": "application/json", ...auth, ...headers }))
        if (v !== undefined) h.set(k, v);
      return target.handle(
        new Request(`http://ingest.test${path}`, {
          method: "POST",
          headers: h,
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
      );
    },
    async key(kind: KeyKind, opts: { serviceName?: string; origins?: string[]; endpoint?: string } = {}) {
      return createApiKey(stack.database.db, {
        kind,
        tenantId: tenant.tenantId,
        userId: kind === "platform" ? tenant.ownerId : undefined,
        ...opts,
      });
    },
    /** Messages in this file's INGEST stream. */
    async stored(): Promise<number> {
      return (await stack.nats.jsm.streams.info(stack.nats.topology.ingestStream)).state.messages;
    },
    /** The last stored IngestMessage. */
    async last(): Promise<any> {
      const info = await stack.nats.jsm.streams.info(stack.nats.topology.ingestStream);
      const m = await stack.nats.jsm.streams.getMessage(stack.nats.topology.ingestStream, { seq: info.state.last_seq });
      return m!.json();
    },
    stop: () => stack.stop(),
  };
}
