import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { apiKeys, users, type KeyKind } from "../db/schema/index.ts";
import { AdminError } from "../errors.ts";
import { inTenant, mustBeUuid, mustFindTenant, serviceNameProblem } from "../admin/guards.ts";
import { generateKey } from "./keys.ts";

/**
 * The one writer of API keys (api_keys), next to their resolution (keys.ts): the admin CLI, the
 * dashboard's key page (platform sign-in service), dev and tests all create and revoke keys here.
 */

/** Most allowed origins a client DSN may list (each one is compared on every browser request). */
export const MAX_ALLOWED_ORIGINS = 50;

/**
 * Why `origin` is not an exact origin, or null. The ingest host compares a browser's `Origin`
 * header with each entry exactly (case-insensitively): scheme, host and port, no path, no
 * wildcard, no trailing slash. So `https://app.example.com` is allowed and
 * `https://app.example.com/`, `https://*.example.com` and `app.example.com` are not.
 */
export function originProblem(origin: string): string | null {
  if (typeof origin !== "string" || origin.length > 2048) return "must be a string of at most 2048 characters";
  try {
    const u = new URL(origin);
    if (u.protocol !== "https:" && u.protocol !== "http:") return "must start with https:// (or http://)";
    if (u.origin !== origin)
      return `is not an exact origin like https://app.example.com (scheme, host and optional port; no path, wildcard or trailing slash; did you mean ${JSON.stringify(u.origin)}?)`;
    return null;
  } catch {
    return "is not an origin like https://app.example.com";
  }
}

/** At most 200 characters, no control characters; blank means none. */
export function keyNameProblem(name: string): string | null {
  if (name.length > 200) return "must be at most 200 characters";
  if (/[\u0000-\u001f\u007f]/.test(name)) return "must not contain control characters";
  return null;
}

function checkOrigins(origins: string[]) {
  if (origins.length > MAX_ALLOWED_ORIGINS) throw new AdminError(`--origins: at most ${MAX_ALLOWED_ORIGINS} origins`);
  for (const o of origins) {
    const problem = originProblem(o);
    if (problem) throw new AdminError(`--origins: ${JSON.stringify(o)} ${problem}`);
  }
}

/** A new key of `kind`; the key itself is in this answer only (the table keeps its hash). */
export async function createApiKey(
  db: Db,
  input: {
    kind: KeyKind;
    tenantId?: string;
    userId?: string;
    serviceName?: string;
    origins?: string[];
    name?: string;
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
    await mustFindTenant(db, tenantId);
    if (input.kind !== "telemetry") {
      if (!input.serviceName) throw new AdminError(`--service is required for ${input.kind} keys`);
      const problem = serviceNameProblem(input.serviceName);
      if (problem) throw new AdminError(`--service ${problem}`);
    }
  }
  if (input.origins?.length && input.kind !== "dsn-client")
    throw new AdminError("--origins applies to dsn-client keys only");
  checkOrigins(input.origins ?? []);
  const name = input.name?.trim() || null;
  const nameProblem = name && keyNameProblem(name);
  if (nameProblem) throw new AdminError(`--name ${nameProblem}`);
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
      name,
    })
    .returning({ id: apiKeys.id });
  return { id: row.id, key };
}

/**
 * `tenantId` scopes the lookup (the dashboard's own tenant), `kinds` the kinds it may revoke
 * (the organization's key page: telemetry keys and DSNs); revoking twice is a 404.
 */
export async function revokeApiKey(db: Db, input: { id: string; tenantId?: string; kinds?: KeyKind[] }) {
  mustBeUuid(input.id, "--id");
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(apiKeys.id, input.id),
        isNull(apiKeys.revokedAt),
        inTenant(apiKeys.tenantId, input.tenantId),
        input.kinds ? inArray(apiKeys.kind, input.kinds) : undefined,
      ),
    )
    .returning({ id: apiKeys.id });
  if (!rows.length) throw new AdminError(`no live key ${input.id}`, 404);
  return rows[0];
}

/**
 * Renames a telemetry key or DSN, or replaces a client DSN's allowed origins (empty = any
 * origin). The ingest host sees the change within its key cache's TTL (2 s).
 */
export async function updateApiKey(
  db: Db,
  input: { id: string; tenantId?: string; name?: string | null; origins?: string[] },
) {
  mustBeUuid(input.id, "--id");
  const patch: Partial<typeof apiKeys.$inferInsert> = {};
  if (input.name !== undefined) {
    const name = input.name?.trim() || null;
    const problem = name && keyNameProblem(name);
    if (problem) throw new AdminError(`--name ${problem}`);
    patch.name = name;
  }
  if (input.origins !== undefined) {
    checkOrigins(input.origins);
    patch.allowedOrigins = input.origins.length ? [...new Set(input.origins)] : null;
  }
  if (!Object.keys(patch).length) throw new AdminError("nothing to update: give --name or --origins");
  return db.transaction(async (tx) => {
    const [k] = await tx
      .select({ kind: apiKeys.kind })
      .from(apiKeys)
      .where(and(eq(apiKeys.id, input.id), isNull(apiKeys.revokedAt), inTenant(apiKeys.tenantId, input.tenantId)))
      .for("update");
    if (!k || k.kind === "platform") throw new AdminError(`no live telemetry key or DSN ${input.id}`, 404);
    if (input.origins?.length && k.kind !== "dsn-client")
      throw new AdminError("--origins applies to dsn-client keys only");
    const [row] = await tx.update(apiKeys).set(patch).where(eq(apiKeys.id, input.id)).returning({
      id: apiKeys.id,
      name: apiKeys.name,
      origins: apiKeys.allowedOrigins,
    });
    return row;
  });
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
