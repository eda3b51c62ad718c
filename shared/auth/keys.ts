import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { apiKeys, tenants, users, type KeyKind, type Role } from "../db/schema/index.ts";
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { randomToken } from "../crypto.ts";
import { encodeDsn } from "./dsn.ts";
import { createRateLimiter, type RateLimiter } from "../rate-limit.ts";

/** Key prefixes by kind. DSN prefixes are the contract's; only the hash is stored. */
export const KEY_PREFIX: Record<KeyKind, string> = {
  telemetry: "cel_tk_",
  "dsn-server": "svc-ing-s-",
  "dsn-client": "svc-ing-c-",
  platform: "cel_pk_",
};

/** Longest credential the resolver looks up: a DSN with a 200-character endpoint and service fits. */
export const MAX_KEY_CHARS = 2048;

/**
 * A new key. A DSN given `dsn.endpoint` (the ingest host's public URL) carries it and its service
 * (docs/sdks.md: `svc-ing-s-<config>.<secret>`); without an endpoint it is a legacy DSN (the
 * secret alone), which SDKs accept with a separate endpoint setting.
 */
export async function generateKey(
  kind: KeyKind,
  dsn?: { endpoint?: string; serviceName?: string },
): Promise<{ key: string; keyHash: string; displayPrefix: string }> {
  const prefix = KEY_PREFIX[kind];
  const secret = randomToken(24);
  const isDsn = kind === "dsn-server" || kind === "dsn-client";
  if (isDsn && dsn?.endpoint) {
    if (!dsn.serviceName) throw new Error(`a ${kind} key needs its service name`);
    const key = encodeDsn(prefix, { endpoint: dsn.endpoint, serviceName: dsn.serviceName }, secret);
    if (key.length > MAX_KEY_CHARS) throw new Error(`the DSN would be longer than ${MAX_KEY_CHARS} characters`);
    // The config part is the same for every DSN of a service: show the secret's start instead.
    return { key, keyHash: hashKey(key), displayPrefix: `${prefix}...${secret.slice(0, 4)}` };
  }
  const key = prefix + secret;
  return { key, keyHash: hashKey(key), displayPrefix: key.slice(0, prefix.length + 4) };
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

export interface KeyResolverOptions {
  /** How long a row read stays valid in the cache (default 2 s). */
  ttlMs?: number;
  now?: () => number;
  /** Cached keys, known and unknown alike; least recently used go first (default 10,000). */
  maxEntries?: number;
  /**
   * Lookups of keys that are not cached, per client address: the only requests that reach
   * Postgres. A random-key spray from one address gets 429 once its bucket is empty, while
   * every cached (valid) key keeps answering from memory. Default 20/s, burst 100; 0 disables.
   */
  missesPerSecond?: number;
  missBurst?: number;
}

/**
 * Resolves a presented key to its live row (not revoked, owner not deprovisioned), with a short
 * cache. The cache TTL bounds how long a revoked key keeps working on any instance.
 *
 * Bounded: the cache is an LRU (lru-cache) of `maxEntries` that holds unknown keys too
 * (negative entries), so a spray of random keys costs at most one query per key per TTL and
 * evicts only the least recently used entries, never the whole cache.
 */
export class KeyResolver {
  private cache: LRUCache<string, { value: ResolvedKey | null }>;
  /** Lookups in progress: a burst of requests with one uncached key costs one query. */
  private inFlight = new Map<string, Promise<ResolvedKey | null>>();
  private misses: RateLimiter;
  /**
   * Hashes that resolved to a live key within the last hour. Their refresh after the TTL skips
   * the per-address limit: a real client sharing an address with a sprayer keeps working.
   * Only a real key can get in here, so a spray cannot use it.
   */
  private recentlyValid: LRUCache<string, true>;
  /** Postgres lookups done (the key-spray bench reads it). */
  lookups = 0;
  constructor(
    private db: Db,
    private options: KeyResolverOptions = {},
  ) {
    const now = options.now ?? Date.now;
    this.cache = new LRUCache({ max: options.maxEntries ?? 10_000, ttl: this.ttlMs, ttlResolution: 0, perf: { now } });
    this.recentlyValid = new LRUCache({ max: options.maxEntries ?? 10_000, ttl: 3600_000, perf: { now } });
    this.misses = createRateLimiter({
      perSecond: options.missesPerSecond ?? 20,
      burst: options.missBurst ?? 100,
      now,
      maxTracked: 50_000,
      subject: "unknown credentials from this address",
    });
  }

  /** How long a revoked key may keep working on an instance that has it cached. */
  get ttlMs(): number {
    return this.options.ttlMs ?? 2_000;
  }

  /**
   * `client` is the caller's network address: a key not in the cache takes a token from that
   * address's bucket before it may cost a query (429 with Retry-After once it is empty).
   */
  async resolve(presented: string, client = "unknown"): Promise<ResolvedKey | null> {
    if (!presented || presented.length > MAX_KEY_CHARS) return null;
    const hash = hashKey(presented);
    const hit = this.cache.get(hash);
    if (hit) return hit.value;
    let pending = this.inFlight.get(hash);
    if (!pending) {
      if (!this.recentlyValid.has(hash)) this.misses.take(client);
      pending = this.lookup(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, pending);
    }
    return pending;
  }

  private async lookup(hash: string): Promise<ResolvedKey | null> {
    // The TTL counts from before the query: the row read is at least that old.
    const readAt = (this.options.now ?? Date.now)();
    this.lookups++;
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
    if (value) this.recentlyValid.set(hash, true);
    const ttl = readAt + this.ttlMs - (this.options.now ?? Date.now)();
    if (ttl > 0) this.cache.set(hash, { value }, { ttl });
    return value;
  }
}
