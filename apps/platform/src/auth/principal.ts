import type postgres from "postgres";
import type { Role } from "@cellar/shared/db/schema";
import { badRequest, forbidden, notFound, unauthorized } from "@cellar/shared/errors";
import type { KeyResolver } from "@cellar/shared/auth/keys";

export interface Principal {
  keyId: string;
  tenantId: string;
  userId: string;
  role: Role;
  plan: "free" | "pro";
}

const ROLE_RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
export const hasRole = (p: Principal, min: Role) => ROLE_RANK[p.role] >= ROLE_RANK[min];

/** Resolves a dashboard sign-in token (apps/platform/src/signin) to the user it acts as. */
export interface SignInTokens {
  /** `client`: the caller's address, for the per-address limit on unknown tokens. */
  resolve(token: string, client?: string): Promise<Principal | null>;
}

/**
 * `Authorization: Token <platform key>`, or `Bearer <dashboard sign-in token>` when sign-in is
 * wired (the scheme name is case-insensitive, RFC 9110). A platform key under Bearer is not a
 * sign-in token, so it is 401 like every other failure (contract: Authentication rules 2-4).
 */
export async function authenticatePlatform(
  keys: KeyResolver,
  header: string | null,
  client?: string,
  signIns?: SignInTokens,
): Promise<Principal> {
  const match = /^(Token|Bearer) ([^\s]+)$/i.exec(header ?? "");
  if (!match) throw unauthorized();
  if (match[1].toLowerCase() === "bearer") {
    const principal = signIns ? await signIns.resolve(match[2], client) : null;
    if (!principal) throw unauthorized();
    return principal;
  }
  const key = await keys.resolve(match[2], client);
  if (!key || key.kind !== "platform" || !key.userId || !key.userRole) throw unauthorized();
  return { keyId: key.id, tenantId: key.tenantId, userId: key.userId, role: key.userRole, plan: key.tenantPlan };
}

/**
 * The trace service `name` in the principal's tenant, if the principal's user can see its
 * project. Another tenant's service is indistinguishable from a missing one (404); a service
 * of a project the user is not a member of is 403. One raw query: this runs on every read, and
 * building it with drizzle cost more CPU (~1.8 ms) than the rest of a small read.
 */
export async function resolveService(
  sql: postgres.Sql | postgres.TransactionSql,
  p: Principal,
  name: string,
): Promise<{ id: string; name: string; projectId: string }> {
  const [svc] = await sql<{ id: string; name: string; project_id: string; member: boolean }[]>`
    select ts.id, ts.name, ts.project_id,
      exists (select 1 from project_memberships pm where pm.user_id = ${p.userId} and pm.project_id = ts.project_id) as member
    from trace_services ts where ts.tenant_id = ${p.tenantId} and ts.name = ${name}`;
  if (!svc) throw notFound("no such service");
  if (!hasRole(p, "admin") && !svc.member) throw forbidden("your project membership does not cover this service");
  return { id: svc.id, name: svc.name, projectId: svc.project_id };
}

/**
 * SQL condition "trace service `alias` is one the principal can see" (tenant always; project
 * membership below admin). For reads by a bare id (span, trace metrics, session metric), where
 * an entity in an unseen project is reported as missing: naming no service, the caller learns
 * nothing about projects it cannot see.
 */
export function visibleServiceCondition(sql: postgres.Sql, p: Principal, alias: string) {
  const col = (c: string) => sql.unsafe(`${alias}.${c}`);
  if (hasRole(p, "admin")) return sql`${col("tenant_id")} = ${p.tenantId}`;
  return sql`${col("tenant_id")} = ${p.tenantId} and exists (
    select 1 from project_memberships pm where pm.user_id = ${p.userId} and pm.project_id = ${col("project_id")})`;
}

export interface ServiceRef {
  id: string;
  name: string;
}

/**
 * Services a read by a bare id may search: the one named (authorized like any named service:
 * 404 / 403), or else every service the principal can see.
 */
export async function candidateServices(sql: postgres.Sql, p: Principal, name?: string): Promise<ServiceRef[]> {
  if (name) {
    const svc = await resolveService(sql, p, name);
    return [{ id: svc.id, name: svc.name }];
  }
  return sql<ServiceRef[]>`select ts.id, ts.name from trace_services ts where ${visibleServiceCondition(sql, p, "ts")}`;
}

/** Exactly one match, else 404 (none) or 400 (the id exists in several services: name one). */
export function pickOne<T>(matches: T[], what: string, idName: string): T {
  if (matches.length === 0) throw notFound(`no such ${what}`);
  if (matches.length > 1)
    throw badRequest(`${idName} matches ${what}s in several services; add the serviceName query parameter`);
  return matches[0];
}
