import { afterAll, expect, test } from "bun:test";
import { createPinnedFetch, pinnedFetch } from "./pinned-fetch.ts";

// A plain local server stands in for the receiver; `.invalid` names never resolve (RFC 6761),
// so an answer proves the request went to the pinned address without a DNS lookup.
const seen: Array<{ host: string | null; body: string; path: string }> = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const url = new URL(req.url);
    seen.push({ host: req.headers.get("host"), body: await req.text(), path: url.pathname });
    if (url.pathname === "/moved") return new Response(null, { status: 302, headers: { location: "/elsewhere" } });
    return new Response("ok", { status: 200 });
  },
});
afterAll(() => server.stop(true));

test("connects to the validated address and keeps the original host name in the Host header", async () => {
  const res = await pinnedFetch(
    `http://hooks.invalid:${server.port}/hook?x=1`,
    { method: "POST", body: "{}", redirect: "manual" },
    { address: "127.0.0.1", hostname: "hooks.invalid" },
  );
  expect(res.status).toBe(200);
  expect(seen.at(-1)).toEqual({ host: `hooks.invalid:${server.port}`, body: "{}", path: "/hook" });
});

test("redirects come back as 3xx and are not followed", async () => {
  const res = await pinnedFetch(
    `http://hooks.invalid:${server.port}/moved`,
    { method: "POST", body: "{}", redirect: "manual" },
    { address: "127.0.0.1", hostname: "hooks.invalid" },
  );
  expect(res.status).toBe(302);
  expect(seen.some((s) => s.path === "/elsewhere")).toBe(false);
});

// TLS: SNI and the certificate check use the host name although the socket goes to an IP.
const opensslAvailable = Bun.which("openssl") !== null;
test.skipIf(!opensslAvailable)("https checks the certificate against the host name, not the pinned IP", async () => {
  const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "pinned-tls-"));
  const gen = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=hooks.example.com",
      "-addext",
      "subjectAltName=DNS:hooks.example.com",
    ],
    { stderr: "ignore", stdout: "ignore" },
  );
  expect(gen.exitCode).toBe(0);
  const cert = readFileSync(join(dir, "cert.pem"), "utf8");
  const key = readFileSync(join(dir, "key.pem"), "utf8");
  rmSync(dir, { recursive: true, force: true });
  const tlsServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    fetch: (req) => new Response(req.headers.get("host")),
  });
  try {
    const fetchWithCa = createPinnedFetch({ ca: cert });
    const init = { method: "POST", body: "{}", redirect: "manual" as const };
    const ok = await fetchWithCa(`https://hooks.example.com:${tlsServer.port}/hook`, init, {
      address: "127.0.0.1",
      hostname: "hooks.example.com",
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe(`hooks.example.com:${tlsServer.port}`);
    // The same address under another name fails verification: no talking to the wrong host.
    const wrong = fetchWithCa(`https://evil.example.com:${tlsServer.port}/hook`, init, {
      address: "127.0.0.1",
      hostname: "evil.example.com",
    });
    await expect(wrong).rejects.toThrow();
    // And without our CA the self-signed certificate is refused.
    await expect(
      pinnedFetch(`https://hooks.example.com:${tlsServer.port}/hook`, init, {
        address: "127.0.0.1",
        hostname: "hooks.example.com",
      }),
    ).rejects.toThrow();
  } finally {
    tlsServer.stop(true);
  }
});

test("HTTP_PROXY / HTTPS_PROXY in the environment are ignored: the request goes to the pinned address", async () => {
  // A "proxy" that answers 599 to anything it receives.
  const proxy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("proxied", { status: 599 }) });
  const saved = { http: process.env.HTTP_PROXY, https: process.env.HTTPS_PROXY, no: process.env.NO_PROXY };
  process.env.HTTP_PROXY = process.env.HTTPS_PROXY = `http://127.0.0.1:${proxy.port}`;
  delete process.env.NO_PROXY;
  try {
    const res = await pinnedFetch(
      `http://hooks.invalid:${server.port}/hook`,
      { method: "POST", body: "{}", redirect: "manual" },
      { address: "127.0.0.1", hostname: "hooks.invalid" },
    );
    expect(res.status).toBe(200);
  } finally {
    for (const [k, v] of [
      ["HTTP_PROXY", saved.http],
      ["HTTPS_PROXY", saved.https],
      ["NO_PROXY", saved.no],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    proxy.stop(true);
  }
});

test("a compressed answer is never inflated: the body comes back as sent, and identity is asked for", async () => {
  let acceptEncoding = null as string | null;
  const zipped = Bun.gzipSync(new Uint8Array(8 * 1024 * 1024)); // 8 MiB of zeros, ~8 KiB gzipped
  const bomb = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      acceptEncoding = req.headers.get("accept-encoding");
      return new Response(zipped, { headers: { "content-encoding": "gzip" } });
    },
  });
  try {
    const res = await pinnedFetch(
      `http://hooks.invalid:${bomb.port}/`,
      { method: "POST", body: "{}", redirect: "manual" },
      { address: "127.0.0.1", hostname: "hooks.invalid" },
    );
    expect((await res.arrayBuffer()).byteLength).toBe(zipped.byteLength);
    expect(acceptEncoding).toBe("identity");
  } finally {
    bomb.stop(true);
  }
});
