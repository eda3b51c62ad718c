import type postgres from "postgres";
import pLimit from "p-limit";
import { LRUCache } from "lru-cache";
import { createRateLimiter, type RateLimiter } from "@cellar/shared/rate-limit";
import { createApiKey, revokeOwnPlatformKey } from "@cellar/shared/auth/key-store";
import { hashKey } from "@cellar/shared/auth/keys";
import { endSignInSession, openSignInSession } from "@cellar/shared/auth/signin-session-store";
import {
  clearFailedSignIns,
  countFailedSignIn,
  lockUserUntil,
  setUserPasswordHash,
} from "@cellar/shared/auth/user-store";
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from "@cellar/shared/auth/passwords";
import { randomToken } from "@cellar/shared/crypto";
import type { Db } from "@cellar/shared/db/client";
import type { Role } from "@cellar/shared/db/schema";
import { badRequest, HttpError, notFound, unauthorized } from "@cellar/shared/errors";
import { visibleServiceCondition, type Principal } from "../auth/principal.ts";
import { lockDurationMs } from "./lockout.ts";

export interface SignInOptions {
  /** Absolute lifetime of a sign-in token. Default 8 hours (a working day). */
  sessionTtlMs?: number;
  now?: () => number;
  /** argon2id verifications at once (19 MiB each). Default 2. */
  maxConcurrentHashes?: number;
  /** Sign-ins waiting for a verification slot before new ones get 429. Default 32. */
  maxQueuedHashes?: number;
  /**
   * Lookups of unknown Bearer tokens per client address (each costs a query): like platform
   * keys' miss limit, default 20/s, burst 100; 0 disables. Tokens seen valid skip it.
   */
  missesPerSecond?: number;
  missBurst?: number;
  /**
   * Failed sign-ins per client address, over every account (credential stuffing from one place
   * would otherwise keep the argon2 queue full for everyone): default 10 at once, then one per
   * 6 s; past it the address gets 429 without a password check. 0 disables.
   */
  failuresPerSecond?: number;
  failureBurst?: number;
}

export const DASHBOARD_TOKEN_PREFIX = "cel_ds_";
const WRONG = "wrong email or password";
/** One email may be a user in several tenants (users are unique per tenant); at most this many are tried. */
const MAX_ACCOUNTS_PER_EMAIL = 5;

export interface SignedIn {
  token: string;
  expiresAt: string;
}

/**
 * Dashboard sign-in: passwords, lockout, and the short-lived Bearer tokens the platform API
 * accepts besides `Token <platform key>` (contract: Authentication rule 2). Only the token's
 * SHA-256 is stored; a token is checked against Postgres on every request, so sign-out and a
 * password reset take effect at once.
 */
export class SignInService {
  private readonly limit;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly misses: RateLimiter;
  private readonly failures: RateLimiter;
  /** Token hashes that resolved to a live sign-in within the hour: they skip the miss limit. */
  private readonly recentlyValid: LRUCache<string, true>;

  constructor(
    private readonly db: Db,
    private readonly sql: postgres.Sql,
    private readonly options: SignInOptions = {},
  ) {
    this.limit = pLimit(options.maxConcurrentHashes ?? 2);
    this.ttlMs = options.sessionTtlMs ?? 8 * 3600_000;
    this.now = options.now ?? Date.now;
    this.misses = createRateLimiter({
      perSecond: options.missesPerSecond ?? 20,
      burst: options.missBurst ?? 100,
      now: this.now,
      maxTracked: 50_000,
      subject: "unknown sign-in tokens from this address",
    });
    this.failures = createRateLimiter({
      perSecond: options.failuresPerSecond ?? 1 / 6,
      burst: options.failureBurst ?? 10,
      now: this.now,
      maxTracked: 50_000,
      subject: "failed sign-ins from this address",
    });
    this.recentlyValid = new LRUCache({ max: 10_000, ttl: 3600_000, perf: { now: this.now } });
  }

  /** Bounded: argon2id is memory-hard on purpose, so a flood of sign-ins must queue, not pile up. */
  private hashSlot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.limit.pendingCount >= (this.options.maxQueuedHashes ?? 32)) {
      return Promise.reject(
        new HttpError(429, "too many sign-ins in progress; try again shortly", { "retry-after": "1" }),
      );
    }
    return this.limit(fn);
  }

  /**
   * `client` is the caller's address: once it has used up its failed sign-ins (see the options),
   * it gets 429 with Retry-After before any lookup or password check, for every account.
   */
  async signIn(email: string, password: string, client = "unknown"): Promise<SignedIn> {
    // take() on an empty bucket throws the 429 (with Retry-After) and takes nothing.
    if (!this.failures.allows(client)) this.failures.take(client);
    try {
      return await this.checkPassword(email, password);
    } catch (err) {
      if (err instanceof HttpError && err.status === 401) {
        try {
          this.failures.take(client);
        } catch {
          // This failure emptied the bucket: it still answers 401; the next attempt gets the 429.
        }
      }
      throw err;
    }
  }

  private async checkPassword(email: string, password: string): Promise<SignedIn> {
    const now = new Date(this.now());
    const accounts = await this.sql<
      { id: string; password_hash: string; failed_sign_ins: number; locked_until: Date | null }[]
    >`
      select id, password_hash, failed_sign_ins, locked_until from users
      where lower(email) = lower(${email}) and password_hash is not null and deprovisioned_at is null
      order by created_at limit ${MAX_ACCOUNTS_PER_EMAIL}`;
    const open = accounts.filter((a) => !a.locked_until || a.locked_until <= now);
    if (accounts.length && !open.length) {
      const until = Math.min(...accounts.map((a) => a.locked_until!.getTime()));
      const seconds = Math.max(1, Math.ceil((until - now.getTime()) / 1000));
      throw new HttpError(429, `too many failed sign-ins; try again in ${seconds} s`, {
        "retry-after": String(seconds),
      });
    }
    if (!open.length) {
      await this.hashSlot(async () => verifyPassword(password, await decoyHash()));
      throw new HttpError(401, WRONG);
    }
    for (const account of open) {
      if (await this.hashSlot(() => verifyPassword(password, account.password_hash))) {
        await clearFailedSignIns(this.db, account.id);
        return this.openSession(account.id, now);
      }
    }
    for (const account of open) {
      // Counted in SQL so concurrent failures all count.
      const lockMs = lockDurationMs(await countFailedSignIn(this.db, account.id));
      if (lockMs > 0) await lockUserUntil(this.db, account.id, new Date(now.getTime() + lockMs));
    }
    throw new HttpError(401, WRONG);
  }

  private async openSession(userId: string, now: Date): Promise<SignedIn> {
    const token = DASHBOARD_TOKEN_PREFIX + randomToken(32);
    const expiresAt = new Date(now.getTime() + this.ttlMs);
    await openSignInSession(this.db, { userId, tokenHash: hashKey(token), expiresAt, now });
    this.recentlyValid.set(hashKey(token), true);
    return { token, expiresAt: expiresAt.toISOString() };
  }

  /**
   * The principal a live token acts as, or null (unknown, expired, signed out, user gone). A
   * token not seen valid lately takes one token from `client`'s bucket first (429 when empty).
   */
  async resolve(token: string, client = "unknown"): Promise<Principal | null> {
    if (!token.startsWith(DASHBOARD_TOKEN_PREFIX) || token.length > 128) return null;
    const hash = hashKey(token);
    if (!this.recentlyValid.has(hash)) this.misses.take(client);
    const [row] = await this.sql<
      { id: string; user_id: string; tenant_id: string; role: Role; plan: "free" | "pro" }[]
    >`
      select s.id, u.id as user_id, u.tenant_id, u.role, t.plan
      from dashboard_sessions s join users u on u.id = s.user_id join tenants t on t.id = u.tenant_id
      where s.token_hash = ${hash} and s.revoked_at is null and s.expires_at > ${new Date(this.now())}
        and u.deprovisioned_at is null`;
    if (!row) return null;
    this.recentlyValid.set(hash, true);
    return { keyId: row.id, tenantId: row.tenant_id, userId: row.user_id, role: row.role, plan: row.plan };
  }

  async signOut(p: Principal): Promise<void> {
    await endSignInSession(this.db, p.keyId, new Date(this.now()));
  }

  /** Sets the password of the invitation's user (once) and signs them in. */
  async acceptInvitation(token: string, password: string): Promise<SignedIn> {
    const problem = passwordProblem(password);
    if (problem) throw badRequest(`invalid password: ${problem}`);
    const now = new Date(this.now());
    const passwordHash = await this.hashSlot(() => hashPassword(password));
    const [row] = await this.sql<{ user_id: string }[]>`
      update invitations i set accepted_at = ${now}
      from users u
      where i.token_hash = ${hashKey(token)} and i.accepted_at is null and i.expires_at > ${now}
        and u.id = i.user_id and u.deprovisioned_at is null
      returning i.user_id`;
    if (!row) throw new HttpError(400, "invalid token: the invitation is unknown, used or expired");
    await setUserPasswordHash(this.db, { userId: row.user_id, passwordHash });
    return this.openSession(row.user_id, now);
  }

  /** Who is signed in, and the trace services they can see (what the dashboard's pickers list). */
  async me(p: Principal) {
    const [user] = await this.sql<
      {
        id: string;
        email: string;
        role: Role;
        tenant_id: string;
        tenant_name: string;
        plan: string;
        webhooks_enabled: boolean;
        expires_at: Date;
      }[]
    >`
      select u.id, u.email, u.role, t.id as tenant_id, t.name as tenant_name, t.plan, t.webhooks_enabled, s.expires_at
      from users u join tenants t on t.id = u.tenant_id join dashboard_sessions s on s.id = ${p.keyId}
      where u.id = ${p.userId}`;
    if (!user) throw unauthorized();
    const services = await this.sql<{ id: string; name: string; project: string }[]>`
      select ts.id, ts.name, pr.name as project from trace_services ts join projects pr on pr.id = ts.project_id
      where ${visibleServiceCondition(this.sql, p, "ts")} order by ts.name limit 1000`;
    return {
      user: { id: user.id, email: user.email, role: user.role },
      tenant: { id: user.tenant_id, name: user.tenant_name, plan: user.plan, webhooksEnabled: user.webhooks_enabled },
      services,
      expiresAt: user.expires_at.toISOString(),
    };
  }

  async listPlatformKeys(p: Principal) {
    const rows = await this.sql<{ id: string; display_prefix: string; created_at: Date }[]>`
      select id, display_prefix, created_at from api_keys
      where user_id = ${p.userId} and kind = 'platform' and revoked_at is null order by created_at desc limit 200`;
    return { keys: rows.map((r) => ({ id: r.id, prefix: r.display_prefix, createdAt: r.created_at.toISOString() })) };
  }

  /** A new platform key for the signed-in user; the key itself is in this answer only. */
  async createPlatformKey(p: Principal) {
    const { id, key } = await createApiKey(this.db, { kind: "platform", userId: p.userId });
    return { id, key, prefix: key.slice(0, 11) };
  }

  async revokePlatformKey(p: Principal, id: string): Promise<void> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) throw notFound("no such key");
    if (!(await revokeOwnPlatformKey(this.db, { id, userId: p.userId, at: new Date(this.now()) })))
      throw notFound("no such key");
  }
}
