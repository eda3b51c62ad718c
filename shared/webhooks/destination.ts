import { lookup } from "node:dns/promises";
import { inCidrs, nonPublicReason, parseAddress, type Cidr } from "./address.ts";

/** Resolves a host name to every address it has right now (A and AAAA). */
export type ResolveDns = (hostname: string) => Promise<string[]>;

/** The system resolver; every address, in the resolver's order. */
export const systemResolveDns: ResolveDns = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export type DestinationProblem = "invalid_url" | "credentials" | "not_https" | "private_address" | "dns_failure";

export type DestinationCheck =
  | { ok: true; url: URL; hostname: string; address: string }
  | { ok: false; problem: DestinationProblem; message: string };

export const MAX_URL_LENGTH = 2048;

const fail = (problem: DestinationProblem, message: string): DestinationCheck => ({ ok: false, problem, message });

/**
 * Checks a webhook URL and picks the one address to connect to (contract: HTTPS, no embedded
 * credentials, resolves only to public addresses). Every resolved address must pass, not only
 * the first: a host answering one public and one private address could be steered to the private
 * one. Addresses inside `allowlist` (WEBHOOK_INSECURE_ALLOWLIST) skip the public and HTTPS rules.
 * The caller connects to `address` and nothing else, so a DNS answer that changes between this
 * check and the connection cannot redirect the request (no second lookup).
 */
export async function checkDestination(
  raw: string,
  opts: { resolveDns: ResolveDns; allowlist: Cidr[]; literalCache?: Map<string, DestinationCheck> },
): Promise<DestinationCheck> {
  const cached = opts.literalCache?.get(raw);
  if (cached) return cached;
  if (raw.length > MAX_URL_LENGTH) return fail("invalid_url", `must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail("invalid_url", "is not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return fail("not_https", "must use https");
  if (url.username || url.password) return fail("credentials", "must not contain credentials");
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  if (!hostname) return fail("invalid_url", "has no host");

  if (parseAddress(hostname)) {
    const verdict = judge(url, hostname, [hostname], opts.allowlist);
    if (opts.literalCache) {
      if (opts.literalCache.size > 10_000) opts.literalCache.clear();
      opts.literalCache.set(raw, verdict);
    }
    return verdict;
  }
  let addresses: string[];
  try {
    addresses = await opts.resolveDns(hostname);
  } catch (err) {
    return fail(
      "dns_failure",
      `host ${hostname} does not resolve (${(err as { code?: string }).code ?? "lookup failed"})`,
    );
  }
  if (addresses.length === 0) return fail("dns_failure", `host ${hostname} does not resolve`);
  return judge(url, hostname, addresses, opts.allowlist);
}

/** Every address must be public or allowlisted; plain http only when all are allowlisted. */
function judge(url: URL, hostname: string, addresses: string[], allowlist: Cidr[]): DestinationCheck {
  let allAllowlisted = true;
  for (const a of addresses) {
    const ip = parseAddress(a);
    if (!ip) return fail("dns_failure", `host ${hostname} resolved to something that is not an address`);
    const allowed = inCidrs(ip, allowlist);
    allAllowlisted &&= allowed;
    const reason = allowed ? null : nonPublicReason(ip);
    // The address itself is not named: the message reaches tenant admins (400s, attempt
    // records), and what an internal name resolves to is not theirs to learn.
    if (reason) return fail("private_address", `resolves to a non-public address (${reason})`);
  }
  if (url.protocol !== "https:" && !allAllowlisted) return fail("not_https", "must use https");
  return { ok: true, url, hostname, address: addresses[0] };
}
