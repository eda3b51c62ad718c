import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { apiKeys, tenants, users, type KeyKind, type Role } from "../db/schema";
import { createHash } from "node:crypto";
import { randomToken } from "../crypto";

/** Key prefixes by kind. DSN prefixes are the contract's; only the hash is stored. */
export const KEY_PREFIX: Record<KeyKind, string> = {
  telemetry: "cel_tk_",
  "dsn-server": "svc-ing-s-",
  "dsn-client": "svc-ing-c-",
  platform: "cel_pk_",
};

export async function generateKey(kind: KeyKind): Promise<{ key: string; keyHash: string; displayPrefix: string }> {
  const key = KEY_PREFIX[kind] + randomToken(24);
  return { key, keyHash: hashKey(key), displayPrefix: key.slice(0, KEY_PREFIX[kind].length + 4) };
}

/**
 * Keys are looked up by the hash of the whole string, never parsed by prefix, so keys minted
 * under an older format (legacy keys) keep working. Same digest as `sha256Hex`, synchronously:
 * it runs on every ingest request, and node:crypto (Bun, Node and Deno alike) costs ~4 us
 * against ~13 us plus a thread hop for crypto.subtle.
 */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export interface ResolvedKey {
  id: string;
  tenantId: string;
  kind: KeyKind;
  serviceName: string | null;
  allowedOrigins: string[] | null;
  userId: string | null;
  userRole: Role | null;
  tenantPlan: "free" | "pro";
}

/**
 * Resolves a presented key to its live row (not revoked, owner not deprovisioned), with a short
 * cache. The cache TTL bounds how long a revoked key keeps working on any instance.
 */
export class KeyResolver {
  private cache = new Map<string, { value: ResolvedKey | null; expiresAt: number }>();
  /** Lookups in progress: a burst of requests with one uncached key costs one query. */
  private inFlight = new Map<string, Promise<ResolvedKey | null>>();
  constructor(
    private db: Db,
    private options: { ttlMs?: number; now?: () => number; maxEntries?: number } = {},
  ) {}

  /** How long a revoked key may keep working on an instance that has it cached. */
  get ttlMs(): number {
    return this.options.ttlMs ?? 2_000;
  }

  async resolve(presented: string): Promise<ResolvedKey | null> {
    if (!presented || presented.length > 512) return null;
    const hash = hashKey(presented);
    const now = (this.options.now ?? Date.now)();
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > now) return hit.value;
    let pending = this.inFlight.get(hash);
    if (!pending) {
      pending = this.lookup(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, pending);
    }
    return pending;
  }

  private async lookup(hash: string): Promise<ResolvedKey | null> {
    // The TTL counts from before the query: the row read is at least that old.
    const readAt = (this.options.now ?? Date.now)();
    const [row] = await this.db
      .select({
        id: apiKeys.id,
        tenantId: apiKeys.tenantId,
        kind: apiKeys.kind,
        serviceName: apiKeys.serviceName,
        allowedOrigins: apiKeys.allowedOrigins,
        userId: apiKeys.userId,
        userRole: users.role,
        userDeprovisionedAt: users.deprovisionedAt,
        tenantPlan: tenants.plan,
      })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .leftJoin(users, eq(users.id, apiKeys.userId))
      .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
      .limit(1);
    let value: ResolvedKey | null = null;
    if (row && !(row.userId && (row.userDeprovisionedAt || !row.userRole))) {
      const { userDeprovisionedAt: _, ...rest } = row;
      value = rest as ResolvedKey;
    }
    if (this.cache.size >= (this.options.maxEntries ?? 10_000)) this.cache.clear();
    this.cache.set(hash, { value, expiresAt: readAt + this.ttlMs });
    return value;
  }
}
