import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "@cellar/shared/db/client";
import { setupTokens, tenants } from "@cellar/shared/db/schema";
import { hashKey } from "@cellar/shared/auth/keys";
import { passwordProblem } from "@cellar/shared/auth/passwords";
import { randomToken } from "@cellar/shared/crypto";
import { HttpError, badRequest } from "@cellar/shared/errors";
import { createInvitation } from "@cellar/shared/admin/signin";
import { createTenant } from "@cellar/shared/admin/tenancy";
import type { Logger } from "@cellar/shared/logger";
import type { SignInService } from "../signin/service.ts";
import { adminCall } from "../org/service.ts";

/** Any fixed 64-bit number: the advisory lock that serializes first-run setups across platform instances. */
const SETUP_LOCK = 0x63656c6c6172n; // "cellar"

export async function deploymentIsSetUp(db: Db): Promise<boolean> {
  const [row] = await db.select({ id: tenants.id }).from(tenants).limit(1);
  return !!row;
}

/**
 * First run: while no organization exists, a one-time setup token is minted at each platform
 * start (only its SHA-256 is stored) and printed in the log, for whoever deploys to open the
 * dashboard's setup page with. Any unused token works once; setup uses them all up. Returns
 * the token, or null once an organization exists.
 */
export async function issueSetupToken(db: Db, logger: Logger, dashboardUrl?: string): Promise<string | null> {
  if (await deploymentIsSetUp(db)) return null;
  const token = `cel_setup_${randomToken(24)}`;
  await db.insert(setupTokens).values({ tokenHash: hashKey(token) });
  logger.warn("first run: no organization exists yet; open the dashboard's setup page and enter this setup token", {
    setupToken: token,
    ...(dashboardUrl ? { setupPage: `${dashboardUrl}/setup` } : {}),
  });
  return token;
}

export interface SetupInput {
  token: string;
  organization: string;
  email: string;
  password: string;
}

/**
 * Creates the first organization and its owner (the same shared functions as the admin CLI's
 * `tenant create` and `user invite`), consuming every setup token, in one transaction under an
 * advisory lock: a second setup, concurrent or later, is refused (409). The owner's password is
 * set through the invitation flow (`acceptInvitation`), which also signs them in.
 */
export async function completeSetup(db: Db, signIns: SignInService, input: SetupInput) {
  const problem = passwordProblem(input.password);
  if (problem) throw badRequest(`invalid password: ${problem}`);
  const invitation = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SETUP_LOCK})`);
    // The shared functions take a Db; inside this transaction they run as savepoints.
    const txDb = tx as unknown as Db;
    if (await deploymentIsSetUp(txDb))
      throw new HttpError(409, "this deployment is already set up: sign in, or ask an owner for an invitation");
    const used = await tx
      .update(setupTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(setupTokens.tokenHash, hashKey(input.token)), isNull(setupTokens.usedAt)))
      .returning({ id: setupTokens.id });
    if (!used.length) throw badRequest("invalid token: not a setup token this deployment printed, or already used");
    await tx.update(setupTokens).set({ usedAt: new Date() }).where(isNull(setupTokens.usedAt));
    const tenant = await adminCall(() => createTenant(txDb, { name: input.organization.trim() }));
    return adminCall(() => createInvitation(txDb, { tenantId: tenant.id, email: input.email.trim(), role: "owner" }));
  });
  return signIns.acceptInvitation(invitation.token, input.password);
}
