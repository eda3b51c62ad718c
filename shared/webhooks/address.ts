import ipaddr from "ipaddr.js";

type Ip = ipaddr.IPv4 | ipaddr.IPv6;
export type Cidr = [Ip, number];

/** Global unicast space (2000::/3): everything outside it is reserved, local or special. */
const V6_GLOBAL: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse("2000::"), 3];

/**
 * Parses an address literal in any spelling a resolver or URL parser might accept: dotted,
 * decimal (`2130706433`), octal (`0177.0.0.1`), hex (`0x7f.1`), short forms (`127.1`),
 * bracketed or zoned IPv6. Returns null for anything that is not an address (a host name).
 */
export function parseAddress(text: string): Ip | null {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  s = s.replace(/%.*$/, ""); // zone id (fe80::1%eth0) names an interface, not a different address
  if (!ipaddr.isValid(s)) return null;
  try {
    return ipaddr.parse(s);
  } catch {
    return null;
  }
}

/**
 * The IPv4 address an IPv6 address stands for, when it embeds one: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and
 * 6to4 (2002:AABB:CCDD::). Such addresses reach the IPv4 host, so they are judged as it.
 */
function embeddedV4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts;
  const low = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  const range = ip.range();
  if (range === "ipv4Mapped" || range === "rfc6145") return low(p[6], p[7]);
  if (p[0] === 0x64 && p[1] === 0xff9b) return low(p[6], p[7]);
  if (p.slice(0, 6).every((x) => x === 0)) return low(p[6], p[7]);
  if (range === "6to4") return low(p[1], p[2]);
  return null;
}

/**
 * Why an address is not a public destination, or null when it is. Allow-list logic: only
 * IPv4 `unicast` (not private, loopback, link-local, CGNAT, multicast, documentation,
 * benchmarking, reserved, broadcast, 0/8) and IPv6 global unicast outside every special range.
 */
export function nonPublicReason(ip: Ip): string | null {
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    const v4 = embeddedV4(v6);
    if (v4) return nonPublicReason(v4);
    const range = v6.range();
    if (range !== "unicast") return range;
    if (!v6.match(V6_GLOBAL)) return "reserved";
    return null;
  }
  const range = (ip as ipaddr.IPv4).range();
  return range === "unicast" ? null : range;
}

export function isPublicAddress(text: string): boolean {
  const ip = parseAddress(text);
  return ip !== null && nonPublicReason(ip) === null;
}

/** Comma-separated CIDRs (the WEBHOOK_INSECURE_ALLOWLIST format); bad entries throw. */
export function parseCidrList(list: string | string[]): Cidr[] {
  const items = Array.isArray(list) ? list : list.split(",");
  return items
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => ipaddr.parseCIDR(s) as Cidr);
}

/** WEBHOOK_INSECURE_ALLOWLIST as a string, a list of CIDR strings, or already parsed. */
export function toCidrs(value: string | string[] | Cidr[] | undefined): Cidr[] {
  if (!value) return [];
  if (typeof value === "string") return parseCidrList(value);
  return value.map((v) => (typeof v === "string" ? (ipaddr.parseCIDR(v) as Cidr) : v));
}

/** True when the address (or the IPv4 address it embeds) lies in one of the CIDRs. */
export function inCidrs(ip: Ip, cidrs: Cidr[]): boolean {
  const forms: Ip[] = [ip];
  if (ip.kind() === "ipv6") {
    const v4 = embeddedV4(ip as ipaddr.IPv6);
    if (v4) forms.push(v4);
  } else forms.push((ip as ipaddr.IPv4).toIPv4MappedAddress());
  return forms.some((f) => cidrs.some(([net, bits]) => net.kind() === f.kind() && f.match(net, bits)));
}
