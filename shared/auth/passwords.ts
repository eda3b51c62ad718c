/**
 * Dashboard passwords: argon2id through Bun.password (PHC strings, salt and cost included, so a
 * later cost change still verifies old hashes). Cost: OWASP's first recommended argon2id setting,
 * m = 19 MiB, t = 2, p = 1 -- memory-hard, yet 19 MiB per verification keeps the platform's memory
 * bounded under a sign-in flood together with the concurrency cap in
 * apps/platform/src/signin/service.ts.
 */
export const ARGON2_MEMORY_KIB = 19_456;
export const ARGON2_TIME_COST = 2;
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/** A reason the password is not acceptable, or null. Length only: NIST SP 800-63B, 5.1.1.2. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== "string") return "password must be a string";
  if (password.length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, {
    algorithm: "argon2id",
    memoryCost: ARGON2_MEMORY_KIB,
    timeCost: ARGON2_TIME_COST,
  });
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash, "argon2id");
}

/**
 * A hash to verify against when the email matches no user, so an unknown email costs the same
 * time as a wrong password and does not reveal which emails exist.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  return (decoy ??= hashPassword(crypto.randomUUID()));
}
