import { afterAll, expect, test } from "bun:test";
import { pinnedFetch } from "./pinned-fetch";

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
  const res = await pinnedFetch(`http://hooks.invalid:${server.port}/hook?x=1`, { method: "POST", body: "{}", redirect: "manual" }, { address: "127.0.0.1", hostname: "hooks.invalid" });
  expect(res.status).toBe(200);
  expect(seen.at(-1)).toEqual({ host: `hooks.invalid:${server.port}`, body: "{}", path: "/hook" });
});

test("redirects come back as 3xx and are not followed", async () => {
  const res = await pinnedFetch(`http://hooks.invalid:${server.port}/moved`, { method: "POST", body: "{}", redirect: "manual" }, { address: "127.0.0.1", hostname: "hooks.invalid" });
  expect(res.status).toBe(302);
  expect(seen.some((s) => s.path === "/elsewhere")).toBe(false);
});
