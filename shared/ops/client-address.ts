import { inCidrs, parseAddress, type Cidr } from "../webhooks/address.ts";

/**
 * The address a request comes from, for the per-address limits (unknown keys and tokens, failed
 * sign-ins). Behind a load balancer every peer is the balancer, so one client's failures would
 * count against everyone: when the peer is one of TRUSTED_PROXIES, the client is the nearest
 * address in `X-Forwarded-For` that is not itself a trusted proxy, read right to left (each
 * proxy appends the address it saw, so only entries right of the first untrusted one are
 * trustworthy; anything a client wrote is further left and never consulted). A peer outside
 * TRUSTED_PROXIES is the client, whatever headers it sends. Unparseable entries end the walk.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | null,
  trusted: Cidr[],
): string | undefined {
  if (!peer || !trusted.length || !forwardedFor) return peer;
  const peerIp = parseAddress(peer);
  if (!peerIp || !inCidrs(peerIp, trusted)) return peer;
  let client = peer;
  // A header of a few hundred hops is a client's invention; 32 entries is more proxies than any path has.
  const hops = forwardedFor.split(",").slice(-32);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i].trim();
    const ip = parseAddress(hop);
    if (!ip) break;
    client = ip.toString();
    if (!inCidrs(ip, trusted)) break;
  }
  return client;
}
