import { expect, test } from "bun:test";
import fc from "fast-check";
import { parseCidrList } from "../webhooks/address.ts";
import { clientAddress } from "./client-address.ts";
import { serveFetch } from "./serve.ts";

const LB = parseCidrList("10.0.0.0/8, 127.0.0.0/8");

test("a peer outside TRUSTED_PROXIES is the client, whatever X-Forwarded-For says", () => {
  expect(clientAddress("203.0.113.9", "198.51.100.1", LB)).toBe("203.0.113.9");
  expect(clientAddress("203.0.113.9", "10.0.0.1", LB)).toBe("203.0.113.9");
  expect(clientAddress("10.0.0.5", "198.51.100.1", [])).toBe("10.0.0.5"); // nothing trusted
  expect(clientAddress(undefined, "198.51.100.1", LB)).toBeUndefined();
});

test("behind trusted proxies the client is the nearest untrusted hop, read right to left", () => {
  expect(clientAddress("10.0.0.5", "198.51.100.1", LB)).toBe("198.51.100.1");
  // The client wrote the leftmost entry itself; the balancer appended what it saw.
  expect(clientAddress("10.0.0.5", "1.2.3.4, 198.51.100.1", LB)).toBe("198.51.100.1");
  // Two proxies: the inner one is trusted too, so the walk goes past it.
  expect(clientAddress("10.0.0.5", "1.2.3.4, 198.51.100.1, 10.9.9.9", LB)).toBe("198.51.100.1");
  // IPv4-mapped peer (a dual-stack listener), IPv6 client, spacing.
  expect(clientAddress("::ffff:127.0.0.1", " 2001:db8::7 ", LB)).toBe("2001:db8::7");
  // No header, or garbage right where a proxy should have written: the peer or the last good hop.
  expect(clientAddress("10.0.0.5", null, LB)).toBe("10.0.0.5");
  expect(clientAddress("10.0.0.5", "nonsense", LB)).toBe("10.0.0.5");
  expect(clientAddress("10.0.0.5", "198.51.100.1, nonsense, 10.1.1.1", LB)).toBe("10.1.1.1");
});

test("whatever a client puts left of the balancer's entry, the answer is the balancer's entry", () => {
  const v4 = fc.tuple(fc.integer({ min: 1, max: 223 }), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join("."));
  const junk = fc.oneof(
    v4,
    fc.string({ maxLength: 40 }).filter((s) => !s.includes(",")),
    fc.constant("10.0.0.1"),
  );
  const untrusted = v4.filter((a) => !a.startsWith("10.") && !a.startsWith("127."));
  fc.assert(
    fc.property(fc.array(junk, { maxLength: 50 }), untrusted, (forged, seen) => {
      expect(clientAddress("10.0.0.5", [...forged, seen].join(", "), LB)).toBe(seen);
    }),
  );
});

test("the server answers requestIP with the forwarded client only from a trusted peer", async () => {
  const echo = (trustedProxies: ReturnType<typeof parseCidrList>) => {
    let served: ReturnType<typeof serveFetch>;
    served = serveFetch((r) => new Response(served.requestIP(r)?.address ?? "none"), {
      port: 0,
      hostname: "127.0.0.1",
      trustedProxies,
    });
    return served;
  };
  const trusting = echo(parseCidrList("127.0.0.0/8"));
  const plain = echo([]);
  try {
    const ask = (port: number) =>
      fetch(`http://127.0.0.1:${port}/`, { headers: { "x-forwarded-for": "1.2.3.4, 198.51.100.1" } }).then((r) =>
        r.text(),
      );
    expect(await ask(trusting.port)).toBe("198.51.100.1");
    expect(await ask(plain.port)).toMatch(/127\.0\.0\.1$/);
  } finally {
    await trusting.stop();
    await plain.stop();
  }
});
