import { describe, expect, test } from "bun:test";
import { inCidrs, isPublicAddress, parseAddress, parseCidrList } from "./address.ts";
import { checkDestination } from "./destination.ts";

const PUBLIC_DNS = async () => ["93.184.216.34"];

// Every form a URL host or a DNS answer can take that reaches a non-public network.
const BLOCKED_HOSTS: string[] = [
  "127.0.0.1",
  "127.1",
  "127.0.1",
  "2130706433",
  "0x7f000001",
  "0x7f.0.0.1",
  "0x7f.1",
  "0177.0.0.1",
  "0177.1",
  "017700000001",
  "0",
  "0.0.0.0",
  "0.1.2.3",
  "10.0.0.1",
  "10.255.255.255",
  "012.1",
  "0xa.0.0.1",
  "167772161",
  "172.16.0.1",
  "172.31.255.254",
  "192.168.0.1",
  "192.168.1",
  "3232235777",
  "0xc0.0xa8.1.1",
  "169.254.169.254",
  "169.254.0.1",
  "2852039166",
  "100.64.0.1",
  "100.127.255.254",
  "224.0.0.1",
  "239.255.255.250",
  "255.255.255.255",
  "240.0.0.1",
  "192.0.2.1",
  "198.51.100.7",
  "203.0.113.9",
  "198.18.0.1",
  "192.0.0.8",
  "[::1]",
  "[::]",
  "[0:0:0:0:0:0:0:1]",
  "[::ffff:127.0.0.1]",
  "[::ffff:7f00:1]",
  "[::ffff:10.0.0.1]",
  "[::ffff:169.254.169.254]",
  "[0:0:0:0:0:ffff:192.168.0.1]",
  "[::ffff:0:10.0.0.1]",
  "[::127.0.0.1]",
  "[::10.1.2.3]",
  "[fe80::1]",
  "[fc00::1]",
  "[fd12:3456:789a::1]",
  "[fec0::1]",
  "[ff02::1]",
  "[2001:db8::1]",
  "[64:ff9b::10.0.0.1]",
  "[64:ff9b::7f00:1]",
  "[2002:7f00:1::]",
  "[2002:a00:1::1]",
  "[2001::1]",
  "[100::1]",
  "[::ffff:0.0.0.0]",
];

const PUBLIC_HOSTS = [
  "93.184.216.34",
  "8.8.8.8",
  "1.1.1.1",
  "[2606:4700:4700::1111]",
  "[::ffff:8.8.8.8]",
  "[64:ff9b::8.8.8.8]",
  "[2002:808:808::1]",
];

describe("destination checks (SSRF)", () => {
  test(`blocks ${BLOCKED_HOSTS.length} private, loopback, link-local, CGNAT, multicast, documentation and reserved spellings`, async () => {
    expect(BLOCKED_HOSTS.length).toBeGreaterThanOrEqual(40);
    const passed: string[] = [];
    for (const host of BLOCKED_HOSTS) {
      const r = await checkDestination(`https://${host}/hook`, { resolveDns: PUBLIC_DNS, allowlist: [] });
      if (r.ok || r.problem !== "private_address") passed.push(`${host} -> ${JSON.stringify(r)}`);
    }
    expect(passed).toEqual([]);
  });

  test("the same forms are blocked when a DNS answer carries them", async () => {
    const answers = BLOCKED_HOSTS.map((h) => h.replace(/^\[|\]$/g, ""));
    for (const a of answers) {
      const r = await checkDestination("https://hooks.example.com/x", { resolveDns: async () => [a], allowlist: [] });
      expect({ a, ok: r.ok }).toEqual({ a, ok: false });
    }
  });

  test("public addresses pass, and the pinned address is the validated one", async () => {
    for (const host of PUBLIC_HOSTS) {
      const r = await checkDestination(`https://${host}/hook`, { resolveDns: PUBLIC_DNS, allowlist: [] });
      expect({ host, ok: r.ok }).toEqual({ host, ok: true });
    }
    const named = await checkDestination("https://hooks.example.com/x", {
      resolveDns: async () => ["93.184.216.34", "2606:4700::1"],
      allowlist: [],
    });
    expect(named).toMatchObject({ ok: true, address: "93.184.216.34", hostname: "hooks.example.com" });
  });

  test("one private address among public answers rejects the host", async () => {
    const r = await checkDestination("https://hooks.example.com/x", {
      resolveDns: async () => ["93.184.216.34", "10.0.0.5"],
      allowlist: [],
    });
    expect(r).toMatchObject({ ok: false, problem: "private_address" });
  });

  test("http, credentials, garbage and unresolvable hosts are refused with a reason", async () => {
    const opts = { resolveDns: PUBLIC_DNS, allowlist: [] };
    expect(await checkDestination("http://hooks.example.com/x", opts)).toMatchObject({
      ok: false,
      problem: "not_https",
    });
    expect(await checkDestination("ftp://hooks.example.com/x", opts)).toMatchObject({
      ok: false,
      problem: "not_https",
    });
    expect(await checkDestination("https://user:pw@hooks.example.com/x", opts)).toMatchObject({
      ok: false,
      problem: "credentials",
    });
    expect(await checkDestination("https://user@hooks.example.com/x", opts)).toMatchObject({
      ok: false,
      problem: "credentials",
    });
    expect(await checkDestination("not a url", opts)).toMatchObject({ ok: false, problem: "invalid_url" });
    const nx = await checkDestination("https://nx.example.com/x", {
      resolveDns: async () => Promise.reject(Object.assign(new Error("x"), { code: "ENOTFOUND" })),
      allowlist: [],
    });
    expect(nx).toMatchObject({ ok: false, problem: "dns_failure" });
    expect(
      await checkDestination("https://empty.example.com/x", { resolveDns: async () => [], allowlist: [] }),
    ).toMatchObject({ ok: false, problem: "dns_failure" });
  });

  test("WEBHOOK_INSECURE_ALLOWLIST exempts listed CIDRs from the public and HTTPS rules only", async () => {
    const allowlist = parseCidrList("127.0.0.0/8, ::1/128");
    expect(await checkDestination("http://127.0.0.1:8080/hook", { resolveDns: PUBLIC_DNS, allowlist })).toMatchObject({
      ok: true,
      address: "127.0.0.1",
    });
    expect(await checkDestination("http://[::1]:8080/hook", { resolveDns: PUBLIC_DNS, allowlist })).toMatchObject({
      ok: true,
    });
    expect(
      await checkDestination("http://localhost/hook", { resolveDns: async () => ["127.0.0.1"], allowlist }),
    ).toMatchObject({ ok: true });
    expect(await checkDestination("https://10.0.0.1/hook", { resolveDns: PUBLIC_DNS, allowlist })).toMatchObject({
      ok: false,
      problem: "private_address",
    });
    expect(
      await checkDestination("http://hooks.example.com/hook", { resolveDns: PUBLIC_DNS, allowlist }),
    ).toMatchObject({ ok: false, problem: "not_https" });
    expect(inCidrs(parseAddress("::ffff:127.0.0.1")!, allowlist)).toBe(true);
  });

  test("address helpers", () => {
    expect(parseAddress("hooks.example.com")).toBeNull();
    expect(parseAddress("fe80::1%eth0")?.toString()).toBe("fe80::1");
    expect(isPublicAddress("8.8.8.8")).toBe(true);
    expect(isPublicAddress("0x7f.1")).toBe(false);
    expect(isPublicAddress("not-an-ip")).toBe(false);
  });
});
