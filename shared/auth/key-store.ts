import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { apiKeys, tenants, users, type KeyKind } from "../db/schema/index.ts";
import { AdminError } from "../errors.ts";
import { generateKey } from "./keys.ts";

/**
 * The one writer of API keys (api_keys), next to their resolution (keys.ts): the admin CLI, the
 * dashboard's key page (platform sign-in service), dev and tests all create and revoke keys here.
 */

/** A new key of `kind`; the key itself is in this answer only (the table keeps its hash). */
export async function createApiKey(
  db: Db,
  input: {
    kind: KeyKind;
    tenantId?: string;
    userId?: string;
    serviceName?: string;
    origins?: string[];
    /** The ingest host's public URL, carried by a DSN (INGEST_PUBLIC_URL); without it: a legacy DSN. */
    endpoint?: string;
  },
) {
  let tenantId = input.tenantId;
  if (input.kind === "platform") {
    if (!input.userId) throw new AdminError("platform keys need --user");
    const [u] = await db
      .select({ tenantId: users.tenantId, gone: users.deprovisionedAt })
      .from(users)
      .where(eq(users.id, input.userId));
    if (!u) throw new AdminError(`no user ${input.userId}`);
    if (u.gone) throw new AdminError("user is deprovisioned");
    tenantId = u.tenantId;
  } else {
    if (!tenantId) throw new AdminError(`${input.kind} keys need --tenant`);
    if (!/^[0-9a-f-]{36}$/i.test(tenantId))
      throw new AdminError(`--tenant ${JSON.stringify(tenantId)} is not a tenant id`);
    const [t] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId));
    if (!t) throw new AdminError(`no tenant ${tenantId}`);
    if (input.kind !== "telemetry" && !input.serviceName) throw new AdminError(`${input.kind} keys need --service`);
  }
  if (input.origins?.length && input.kind !== "dsn-client")
    throw new AdminError("--origins applies to dsn-client keys only");
  for (const o of input.origins ?? []) {
    let ok = false;
    try {
      const u = new URL(o);
      ok = (u.protocol === "https:" || u.protocol === "http:") && u.origin === o;
    } catch {}
    if (!ok) throw new AdminError(`--origins: ${JSON.stringify(o)} is not an origin like https://app.example.com`);
  }
  const { key, keyHash, displayPrefix } = await generateKey(input.kind, {
    endpoint: input.endpoint,
    serviceName: input.serviceName,
  });
  const [row] = await db
    .insert(apiKeys)
    .values({
      tenantId: tenantId!,
      userId: input.kind === "platform" ? input.userId : null,
      kind: input.kind,
      keyHash,
      displayPrefix,
      serviceName: input.kind === "telemetry" || input.kind === "platform" ? null : input.serviceName,
      allowedOrigins: input.origins?.length ? input.origins : null,
    })
    .returning({ id: apiKeys.id });
  return { id: row.id, key };
}

export async function revokeApiKey(db: Db, input: { id: string }) {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(eq(apiKeys.id, input.id))
    .returning({ id: apiKeys.id });
  if (!rows.length) throw new AdminError(`no key ${input.id}`);
  return rows[0];
}

/**
 * Revokes the user's own live platform key (the dashboard's key page); false when the user has no
 * such key (another user's, a telemetry key, already revoked).
 */
export async function revokeOwnPlatformKey(db: Db, input: { id: string; userId: string; at: Date }): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: input.at })
    .where(
      and(
        eq(apiKeys.id, input.id),
        eq(apiKeys.userId, input.userId),
        eq(apiKeys.kind, "platform"),
        isNull(apiKeys.revokedAt),
      ),
    )
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}
